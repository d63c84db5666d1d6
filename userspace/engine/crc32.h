/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Ethernet's CRC-32, as isa-l's crc32_gzip_refl() and zlib's crc32():
 * crc is the value of the bytes before (0 for none).
 */
#ifndef RXDP_ENGINE_CRC32_H
#define RXDP_ENGINE_CRC32_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* shorter buffers go to isa-l whole: the fold's set-up would cost more */
#define RXDP_CRC32_FOLD_MIN 256

uint32_t rxdp_crc32(uint32_t crc, const void *buf, size_t len);
/* memcpy(dst, src, len), and the CRC of those bytes in the same pass */
uint32_t rxdp_crc32_copy(uint32_t crc, void *dst, const void *src, size_t len);

/* whether this CPU takes the AVX2 fold (else isa-l does it all) */
bool rxdp_crc32_folds(void);

#endif
