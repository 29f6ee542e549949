"""Hardware geometry shared by every part of the simulator: one place for tile, face and block sizes."""

TILE_DIM = 32          # a tile is TILE_DIM x TILE_DIM values
FACE_DIM = 16          # a tile is four FACE_DIM x FACE_DIM faces
TILE_SIZE = TILE_DIM * TILE_DIM
FACES_PER_TILE = (TILE_DIM // FACE_DIM) ** 2
BLOCK_SIZE = 16        # values sharing one exponent in block-float formats: one face row
