"""Tile bytes written by hand: layout, block-float encoding and bit packing, checked literally."""

import numpy as np

from buda_runtime_sim.constants import FACE_DIM, TILE_DIM
from buda_runtime_sim.dataformat import DataFormat as DF
from buda_runtime_sim.formats import pack_tiles, quantize, unpack_tiles


def test_float32_face_order_inside_a_tile():
    i, j = np.meshgrid(np.arange(TILE_DIM), np.arange(TILE_DIM), indexing="ij")
    x = (i * TILE_DIM + j).astype(np.float32)
    stored = np.frombuffer(pack_tiles(x, DF.Float32), "<f4")
    faces = TILE_DIM // FACE_DIM
    position = ((i // FACE_DIM) * faces + j // FACE_DIM) * FACE_DIM**2 + (i % FACE_DIM) * FACE_DIM + j % FACE_DIM
    np.testing.assert_array_equal(stored[position], x)


def test_tiles_in_row_major_order_with_zero_padding():
    x = np.random.default_rng(0).standard_normal((2, 40, 70)).astype(np.float32)
    tiles = np.frombuffer(pack_tiles(x, DF.Float32), "<f4").reshape(2, 2, 3, TILE_DIM * TILE_DIM)
    for b, r, c in [(0, 0, 0), (0, 1, 2), (1, 0, 1), (1, 1, 0)]:
        assert tiles[b, r, c, 0] == x[b, r * TILE_DIM, c * TILE_DIM]
    assert np.all(tiles[:, 1, :, 8 * FACE_DIM:16 * FACE_DIM] == 0)   # face 0 rows 8..15 of tile row 1: rows 40..47
    np.testing.assert_array_equal(unpack_tiles(pack_tiles(x, DF.Float32), DF.Float32, x.shape), x)


def test_bfp8_b_tile_by_hand():
    x = np.zeros((TILE_DIM, TILE_DIM), np.float32)
    x[0, :4] = [1.0, -0.5, 0.25, 3.0]
    x[1, :6] = [1.0, 1 + 2**-7, 1 + 2**-6 + 2**-7, -(2**-7), 2**-8, 2 - 2**-8]
    x[0, 16:18] = [-6.0, 0.1]
    x[16, :2] = [-0.0, 1e-40]
    x[31, 31] = 256.0
    expected = bytearray(64 + 1024)
    # Exponent bytes: face 0 rows 0-15, face 1 rows 0-15, ...
    # face 0 row 0: exponents 127, 126, 125, 128 -> shared 128 = 0x80
    # face 0 row 1: largest 1.99609375 -> 127 = 0x7F
    # face 1 row 0 (x[0, 16:32]): -6.0 = -1.5 * 2**2 -> 129 = 0x81 (0.1 has 123)
    # face 2 row 0: -0 and a denormal -> 0
    # face 3 row 15 (x[31, 16:32]): 256 = 2**8 -> 135 = 0x87
    expected[0], expected[1], expected[16], expected[32], expected[63] = 0x80, 0x7F, 0x81, 0x00, 0x87
    # Values: mantissa with hidden one (24 bits) >> (shared - own exponent), keep 7 bits (>> 17 more),
    # round half to even, saturate at 127; sign in bit 7; magnitude 0 stored without sign.
    # face 0 row 0, shared 128: 1.0 0x800000>>1>>17 = 0x20; -0.5 >>2>>17 = 0x10 | 0x80 = 0x90;
    #   0.25 >>3>>17 = 0x08; 3.0 0xC00000>>0>>17 = 0x60
    expected[64:64 + 16] = bytes.fromhex("20 90 08 60" + " 00" * 12)
    # face 0 row 1, shared 127: 1.0 -> 64 = 0x40; 1+2**-7 = 64.5 -> tie -> even 64 = 0x40;
    #   1+2**-6+2**-7 = 65.5 -> 66 = 0x42; -2**-7 = 0.5 -> 0, no sign = 0x00; 2**-8 = 0.25 -> 0x00;
    #   2-2**-8 = 127.75 -> 128 -> saturates at 127 = 0x7F
    expected[80:80 + 16] = bytes.fromhex("40 40 42 00 00 7F" + " 00" * 10)
    # face 1 row 0 at 64 + 256, shared 129: -6.0 0xC00000>>0>>17 = 96 | sign = 0xE0;
    #   0.1 = 0xCCCCCD >> 6 >> 17 = 1.6 -> 2 = 0x02 (decodes to 2 * 2**(129-127-6) = 0.125)
    expected[320:320 + 16] = bytes.fromhex("E0 02" + " 00" * 14)
    # face 3 row 15 at 64 + 3*256 + 15*16 = 1072, shared 135: 256.0 -> 0x40 in the last column
    expected[1072:1088] = bytes.fromhex("00 " * 15 + "40")
    packed = pack_tiles(x, DF.Bfp8_b)
    assert packed == bytes(expected)
    values = unpack_tiles(packed, DF.Bfp8_b, x.shape)
    assert list(values[0, 16:18]) == [-6.0, 0.125]
    assert list(values[1, :6]) == [1.0, 1.0, 1 + 2**-5, 0.0, 0.0, 2 - 2**-6]
    np.testing.assert_array_equal(values, quantize(x, DF.Bfp8_b))


def test_bfp4_and_bfp2_pack_first_value_in_low_bits():
    # Bfp4_b, shared 127, step 2**-2: 1.0 -> 4 = 0x4; -0.5 -> 2 | sign 0x8 = 0xA; 0.25 -> 1.
    # Byte 0 = 0x4 | 0xA << 4 = 0xA4, byte 1 = 0x01.
    packed = pack_tiles(np.array([1.0, -0.5, 0.25], np.float32), DF.Bfp4_b)
    assert packed[0] == 0x7F and packed[64:66] == bytes([0xA4, 0x01])
    # Bfp2_b, shared 127, step 1: 1.0 -> 0b01; -1.0 -> 0b11; 0.5 -> tie -> 0; 0.75 -> 1 = 0b01.
    # Byte 0 = 0b01 | 0b11 << 2 | 0b00 << 4 | 0b01 << 6 = 0x4D.
    packed = pack_tiles(np.array([1.0, -1.0, 0.5, 0.75], np.float32), DF.Bfp2_b)
    assert packed[0] == 0x7F and packed[64] == 0x4D


def test_a_family_exponent_is_rebiased_to_five_bits():
    # Bfp8: block max 1.0 has exponent 127 -> 127 - 127 + 15 = 15; 1.0 -> 0x40, -0.5 -> 0x20 | 0x80 = 0xA0.
    packed = pack_tiles(np.array([1.0, -0.5], np.float32), DF.Bfp8)
    assert packed[0] == 0x0F and packed[64:66] == bytes([0x40, 0xA0])


def test_scalar_formats_by_hand():
    assert pack_tiles(np.array([-5, 5, -127, 200]), DF.Int8)[:4] == bytes([0x85, 0x05, 0xFF, 0x7F])
    assert pack_tiles(np.array([1.0, -2.0], np.float32), DF.Float16_b)[:4] == bytes.fromhex("80 3F 00 C0")
    assert pack_tiles(np.array([1.0, -2.0], np.float32), DF.Float16)[:4] == bytes.fromhex("00 3C 00 C0")
    assert pack_tiles(np.array([1.0, -2.0], np.float32), DF.Lf8)[:2] == bytes([0x3C, 0xC0])
    assert pack_tiles(np.array([70000.0, 3.0]), DF.UInt16)[:4] == bytes.fromhex("FF FF 03 00")
