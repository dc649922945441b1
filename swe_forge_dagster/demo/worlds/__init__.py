"""demo/worlds"""
