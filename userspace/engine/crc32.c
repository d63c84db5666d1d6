// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Ethernet's CRC-32 for the ICRC, in isa-l's crc32_gzip_refl() convention
 * (zlib's crc32()). isa-l folds 16 bytes per carry-less multiply, or 64
 * with AVX-512; a CPU with VPCLMULQDQ but no AVX-512 (AMD Zen 3, Intel's
 * hybrid client cores) multiplies two 16-byte lanes per instruction in AVX2
 * registers, which isa-l leaves unused. The fold below does, on such CPUs
 * only: a 4154-byte frame's CRC takes 175 ns instead of isa-l's 330 on the
 * 2-core VM (AMD EPYC, Zen 3).
 *
 * The fold (Intel's "Fast CRC Computation for Generic Polynomials Using
 * PCLMULQDQ", reflected form): a 16-byte lane V of a message, D bits before
 * another, is worth V(x) * x^D there modulo P. With V's low 8 bytes a(x)
 * (the earlier ones: higher powers) and its high 8 bytes b(x), that is
 * a * (x^(D+32) mod P) + b * (x^(D-32) mod P) in the carry-less product's
 * bit order, a value of 95 bits at most, xored into the later lane. Eight
 * lanes (four AVX2 registers, 128 bytes) fold forward 1024 bits at a time;
 * the eight that remain fold into the last one, a 16-byte message with the
 * same CRC as everything folded into it, which isa-l finishes with the
 * tail in one call (two calls, the 128 bytes and then the tail, cost
 * 40-50 ns more a frame: isa-l's small calls cost about 20 ns each). The
 * incoming CRC (inverted, as crc32_gzip_refl() does) is xored into the
 * first 4 bytes, which is what the shift register does with it.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <isa-l/crc.h>

#include "engine/crc32.h"

#define CRC_BLOCK 128 /* bytes folded a step: four 32-byte registers */

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

/*
 * The fold constants for D bits, x^(D+32) and x^(D-32) modulo P, reflected,
 * x^0 at bit 32, for D = 1024 (the loop), 512, 256 and 128 (folding the
 * eight lanes into one). For D = 512 they are the constants of Intel's
 * paper, for D = 128 isa-l's; test_pkt.c checks the fold against isa-l.
 */
#define K1024 0x14a7fe880ULL, 0x1e88ef372ULL
#define K512 0x1c6e41596ULL, 0x154442bd4ULL
#define K256 0x15a546366ULL, 0x0f1da05aaULL
#define K128 0x0ccaa009eULL, 0x1751997d0ULL

#define FOLD_TARGET "avx2,pclmul,vpclmulqdq"

/* a D's pair in each 16-byte lane: x^(D+32) low, x^(D-32) high */
#define K_YMM_(hi, lo)                                                       \
	_mm256_set_epi64x((long long)(hi), (long long)(lo), (long long)(hi), \
			  (long long)(lo))
#define K_YMM(k) K_YMM_(k)
#define K_XMM_(hi, lo) _mm_set_epi64x((long long)(hi), (long long)(lo))
#define K_XMM(k) K_XMM_(k)

__attribute__((target(FOLD_TARGET))) static __m256i fold(__m256i acc, __m256i k,
							 __m256i next)
{
	__m256i lo = _mm256_clmulepi64_epi128(acc, k, 0x00);
	__m256i hi = _mm256_clmulepi64_epi128(acc, k, 0x11);

	return _mm256_xor_si256(_mm256_xor_si256(lo, hi), next);
}

__attribute__((target(FOLD_TARGET), always_inline)) static inline __m256i
load_block(uint8_t *dst, const uint8_t *p)
{
	__m256i v = _mm256_loadu_si256((const __m256i *)p);

	if (dst)
		_mm256_storeu_si256((__m256i *)dst, v);
	return v;
}

/*
 * len >= CRC_BLOCK; returns how many bytes it took (a multiple of 128),
 * copied to dst on the way where dst is not NULL (the stores ride along
 * with the multiplies, which bound the loop), and leaves in lane 16 bytes
 * whose CRC from zero is that of crc followed by those bytes: the eight
 * lanes fold into one 64, 32 and 16 bytes forward. (Four variables, not
 * an array: gcc kept an array on the stack once the lanes were folded
 * together, a store and a load in every fold's chain.)
 */
__attribute__((target(FOLD_TARGET), always_inline)) static inline size_t
fold_blocks(uint32_t crc, uint8_t *lane, uint8_t *dst, const uint8_t *p,
	    size_t len)
{
	__m256i k = K_YMM(K1024), a0, a1, a2, a3;
	__m128i lo, hi;
	size_t done;

	a0 = load_block(dst, p);
	a1 = load_block(dst ? dst + 32 : NULL, p + 32);
	a2 = load_block(dst ? dst + 64 : NULL, p + 64);
	a3 = load_block(dst ? dst + 96 : NULL, p + 96);
	a0 = _mm256_xor_si256(a0,
			      _mm256_set_epi32(0, 0, 0, 0, 0, 0, 0, (int)~crc));
	for (done = CRC_BLOCK; len - done >= CRC_BLOCK; done += CRC_BLOCK) {
		const uint8_t *q = p + done;
		uint8_t *d = dst ? dst + done : NULL;

		a0 = fold(a0, k, load_block(d, q));
		a1 = fold(a1, k, load_block(d ? d + 32 : NULL, q + 32));
		a2 = fold(a2, k, load_block(d ? d + 64 : NULL, q + 64));
		a3 = fold(a3, k, load_block(d ? d + 96 : NULL, q + 96));
	}
	/* lanes 0-1 into 4-5 and 2-3 into 6-7, then 4-5 into 6-7 */
	a2 = fold(a0, K_YMM(K512), a2);
	a3 = fold(a1, K_YMM(K512), a3);
	a3 = fold(a2, K_YMM(K256), a3);
	lo = _mm256_castsi256_si128(a3);
	hi = _mm256_extracti128_si256(a3, 1);
	hi = _mm_xor_si128(hi, _mm_clmulepi64_si128(lo, K_XMM(K128), 0x00));
	hi = _mm_xor_si128(hi, _mm_clmulepi64_si128(lo, K_XMM(K128), 0x11));
	_mm_storeu_si128((__m128i *)lane, hi);
	return done;
}

__attribute__((target(FOLD_TARGET))) static size_t
fold_only(uint32_t crc, uint8_t *lane, const uint8_t *p, size_t len)
{
	return fold_blocks(crc, lane, NULL, p, len);
}

__attribute__((target(FOLD_TARGET))) static size_t
fold_copy(uint32_t crc, uint8_t *lane, uint8_t *dst, const uint8_t *p,
	  size_t len)
{
	return fold_blocks(crc, lane, dst, p, len);
}

/* VPCLMULQDQ in AVX2 registers; with AVX-512 isa-l's own fold is wider */
static bool can_fold(void)
{
	return __builtin_cpu_supports("avx2") &&
	       __builtin_cpu_supports("vpclmulqdq") &&
	       !(__builtin_cpu_supports("avx512f") &&
		 __builtin_cpu_supports("avx512vl"));
}

/*
 * The folded lane and the tail behind it (under 128 bytes) in one isa-l
 * call: below 256 bytes its calls cost about 20 ns each before a byte
 */
uint32_t rxdp_crc32(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint8_t rest[16 + CRC_BLOCK];
	size_t n;

	if (len < RXDP_CRC32_FOLD_MIN || !can_fold())
		return crc32_gzip_refl(crc, p, len);
	n = fold_only(crc, rest, p, len);
	memcpy(rest + 16, p + n, len - n);
	/* the lane holds the CRC so far: the rest starts from zero */
	return crc32_gzip_refl(~0U, rest, 16 + len - n);
}

uint32_t rxdp_crc32_copy(uint32_t crc, void *dst, const void *src, size_t len)
{
	const uint8_t *p = src;
	uint8_t *d = dst, rest[16 + CRC_BLOCK];
	size_t n;

	if (len < RXDP_CRC32_FOLD_MIN || !can_fold()) {
		memcpy(d, p, len);
		return crc32_gzip_refl(crc, d, len);
	}
	n = fold_copy(crc, rest, d, p, len);
	memcpy(d + n, p + n, len - n);
	memcpy(rest + 16, p + n, len - n);
	return crc32_gzip_refl(~0U, rest, 16 + len - n);
}

bool rxdp_crc32_folds(void)
{
	return can_fold();
}

#else

uint32_t rxdp_crc32(uint32_t crc, const void *buf, size_t len)
{
	return crc32_gzip_refl(crc, buf, len);
}

uint32_t rxdp_crc32_copy(uint32_t crc, void *dst, const void *src, size_t len)
{
	memcpy(dst, src, len);
	return crc32_gzip_refl(crc, dst, len);
}

bool rxdp_crc32_folds(void)
{
	return false;
}

#endif
