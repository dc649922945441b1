"""The JavaScript/TypeScript (Node) language pack: `pack.PACK` and the modules it is made of."""
