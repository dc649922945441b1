"""demo/twins"""
