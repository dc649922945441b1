"""The Java language pack: `pack.PACK` and the modules it is made of."""
