// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Ethernet's CRC-32 for the ICRC, in isa-l's crc32_gzip_refl() convention
 * (zlib's crc32()). isa-l folds 16 bytes per carry-less multiply, or 64
 * with AVX-512; a CPU with VPCLMULQDQ but no AVX-512 (AMD Zen 3, Intel's
 * hybrid client cores) multiplies two 16-byte lanes per instruction in AVX2
 * registers, which isa-l leaves unused. The fold below does, on such CPUs
 * only: a 4154-byte frame's CRC takes 184 ns instead of isa-l's 325 on the
 * 2-core VM (AMD EPYC, Zen 3).
 *
 * The fold (Intel's "Fast CRC Computation for Generic Polynomials Using
 * PCLMULQDQ", reflected form): a 16-byte lane V of a message, D bits before
 * another, is worth V(x) * x^D there modulo P. With V's low 8 bytes a(x)
 * (the earlier ones: higher powers) and its high 8 bytes b(x), that is
 * a * (x^(D+32) mod P) + b * (x^(D-32) mod P) in the carry-less product's
 * bit order, a value of 95 bits at most, xored into the later lane. Eight
 * lanes (four AVX2 registers, 128 bytes) fold forward 1024 bits at a time;
 * the eight that remain are 128 bytes of a message with the same CRC as
 * everything folded into them, which isa-l finishes with the tail. The
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
 * The fold constants for D = 1024 bits: x^1056 and x^992 modulo P,
 * reflected, x^0 at bit 32 (for D = 512 the same rule gives 0x154442bd4
 * and 0x1c6e41596, the constants of Intel's paper; test_pkt.c checks the
 * fold against isa-l)
 */
#define K_LO 0x1e88ef372ULL
#define K_HI 0x14a7fe880ULL

__attribute__((target("avx2,vpclmulqdq"))) static __m256i
fold(__m256i acc, __m256i k, __m256i next)
{
	__m256i lo = _mm256_clmulepi64_epi128(acc, k, 0x00);
	__m256i hi = _mm256_clmulepi64_epi128(acc, k, 0x11);

	return _mm256_xor_si256(_mm256_xor_si256(lo, hi), next);
}

/*
 * len >= CRC_BLOCK; returns how many bytes it took (a multiple of 128),
 * copied to dst on the way where dst is not NULL (the stores ride along
 * with the multiplies, which bound the loop)
 */
__attribute__((target("avx2,vpclmulqdq"), always_inline)) static inline size_t
fold_blocks(uint32_t *crc, uint8_t *dst, const uint8_t *p, size_t len)
{
	__m256i k = _mm256_set_epi64x((long long)K_HI, (long long)K_LO,
				      (long long)K_HI, (long long)K_LO);
	__m256i a[4], v;
	uint8_t out[CRC_BLOCK];
	size_t done = CRC_BLOCK;

	for (int i = 0; i < 4; i++) {
		a[i] = _mm256_loadu_si256((const __m256i *)(p + 32 * i));
		if (dst)
			_mm256_storeu_si256((__m256i *)(dst + 32 * i), a[i]);
	}
	a[0] = _mm256_xor_si256(a[0], _mm256_set_epi32(0, 0, 0, 0, 0, 0, 0,
						       (int)~*crc));
	for (; len - done >= CRC_BLOCK; done += CRC_BLOCK)
		for (int i = 0; i < 4; i++) {
			v = _mm256_loadu_si256(
				(const __m256i *)(p + done + 32 * i));
			if (dst)
				_mm256_storeu_si256(
					(__m256i *)(dst + done + 32 * i), v);
			a[i] = fold(a[i], k, v);
		}
	for (int i = 0; i < 4; i++)
		_mm256_storeu_si256((__m256i *)(out + 32 * i), a[i]);
	/* the register was xored in: these 128 bytes start from zero */
	*crc = crc32_gzip_refl(~0U, out, CRC_BLOCK);
	return done;
}

__attribute__((target("avx2,vpclmulqdq"))) static size_t
fold_only(uint32_t *crc, const uint8_t *p, size_t len)
{
	return fold_blocks(crc, NULL, p, len);
}

__attribute__((target("avx2,vpclmulqdq"))) static size_t
fold_copy(uint32_t *crc, uint8_t *dst, const uint8_t *p, size_t len)
{
	return fold_blocks(crc, dst, p, len);
}

/* VPCLMULQDQ in AVX2 registers; with AVX-512 isa-l's own fold is wider */
static bool can_fold(void)
{
	return __builtin_cpu_supports("avx2") &&
	       __builtin_cpu_supports("vpclmulqdq") &&
	       !(__builtin_cpu_supports("avx512f") &&
		 __builtin_cpu_supports("avx512vl"));
}

uint32_t rxdp_crc32(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	if (len >= RXDP_CRC32_FOLD_MIN && can_fold()) {
		size_t n = fold_only(&crc, p, len);

		p += n;
		len -= n;
	}
	return crc32_gzip_refl(crc, p, len);
}

uint32_t rxdp_crc32_copy(uint32_t crc, void *dst, const void *src, size_t len)
{
	const uint8_t *p = src;
	uint8_t *d = dst;

	if (len >= RXDP_CRC32_FOLD_MIN && can_fold()) {
		size_t n = fold_copy(&crc, d, p, len);

		p += n;
		d += n;
		len -= n;
	}
	memcpy(d, p, len);
	return crc32_gzip_refl(crc, d, len);
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
