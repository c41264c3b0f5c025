#ifndef HEARTH_DIGESTS_H
#define HEARTH_DIGESTS_H

#include <stddef.h>
#include <stdint.h>

/// MD5, and where the processor allows SHA-256 too, of one stream of bytes, in one pass over each block.
typedef struct {
    uint32_t md5[4];
    uint32_t sha256[8];
    uint64_t length;
    uint8_t buffer[64];
    int with_sha256;
} hearth_digests;

/// Whether this processor has the SHA extensions that `hearth_digests_init(…, 1)` computes SHA-256 with.
/// Asked once: in a virtual machine the instruction that answers traps to the host.
int hearth_digests_sha256_supported(void);

/// Starts the digests; SHA-256 too when `with_sha256`, which only a processor with the SHA extensions may ask.
void hearth_digests_init(hearth_digests *digests, int with_sha256);

void hearth_digests_update(hearth_digests *digests, const void *bytes, size_t count);

/// Writes the MD5 (16 bytes) and, when it was computed, the SHA-256 (32 bytes); `digests` is spent.
void hearth_digests_final(hearth_digests *digests, uint8_t md5[16], uint8_t sha256[32]);

#endif
