#include "digests.h"
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

// MD5 is one chain of dependent additions that leaves most of a core's units idle; SHA-256's rounds with the
// SHA extensions run on others. Both over the same block, interleaved, cost about what MD5 alone does.

static inline uint32_t load_le32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v; // x86-64 and arm64 are little-endian, as MD5 is
}

#define MD5_F(x, y, z) ((z) ^ ((x) & ((y) ^ (z))))
#define MD5_H(x, y, z) ((x) ^ (y) ^ (z))
#define MD5_I(x, y, z) ((y) ^ ((x) | ~(z)))
#define ROTL(x, n) (((x) << (n)) | ((x) >> (32 - (n))))
// The empty asm keeps the compiler from reassociating the sum so the round function's result is added
// last: what does not depend on the step before is then done beside it, off the chain.
#define MD5_STEP(f, a, b, c, d, x, t, s) \
    (a) += (x) + (uint32_t)(t); __asm__("" : "+r"(a)); (a) += f((b), (c), (d)); (a) = ROTL((a), (s)); (a) += (b);
// G(b, c, d) = (b & d) | (c & ~d), the halves added apart so the one that does not need `b` goes first.
#define MD5_STEP_G(a, b, c, d, x, t, s) \
    (a) += (x) + (uint32_t)(t); (a) += (c) & ~(d); __asm__("" : "+r"(a)); (a) += (b) & (d); \
    (a) = ROTL((a), (s)); (a) += (b);

#define MD5_ROUND1(X) \
    MD5_STEP(MD5_F, a, b, c, d, X[0], 0xd76aa478, 7)   MD5_STEP(MD5_F, d, a, b, c, X[1], 0xe8c7b756, 12) \
    MD5_STEP(MD5_F, c, d, a, b, X[2], 0x242070db, 17)  MD5_STEP(MD5_F, b, c, d, a, X[3], 0xc1bdceee, 22) \
    MD5_STEP(MD5_F, a, b, c, d, X[4], 0xf57c0faf, 7)   MD5_STEP(MD5_F, d, a, b, c, X[5], 0x4787c62a, 12) \
    MD5_STEP(MD5_F, c, d, a, b, X[6], 0xa8304613, 17)  MD5_STEP(MD5_F, b, c, d, a, X[7], 0xfd469501, 22) \
    MD5_STEP(MD5_F, a, b, c, d, X[8], 0x698098d8, 7)   MD5_STEP(MD5_F, d, a, b, c, X[9], 0x8b44f7af, 12) \
    MD5_STEP(MD5_F, c, d, a, b, X[10], 0xffff5bb1, 17) MD5_STEP(MD5_F, b, c, d, a, X[11], 0x895cd7be, 22) \
    MD5_STEP(MD5_F, a, b, c, d, X[12], 0x6b901122, 7)  MD5_STEP(MD5_F, d, a, b, c, X[13], 0xfd987193, 12) \
    MD5_STEP(MD5_F, c, d, a, b, X[14], 0xa679438e, 17) MD5_STEP(MD5_F, b, c, d, a, X[15], 0x49b40821, 22)
#define MD5_ROUND2(X) \
    MD5_STEP_G(a, b, c, d, X[1], 0xf61e2562, 5)   MD5_STEP_G(d, a, b, c, X[6], 0xc040b340, 9) \
    MD5_STEP_G(c, d, a, b, X[11], 0x265e5a51, 14) MD5_STEP_G(b, c, d, a, X[0], 0xe9b6c7aa, 20) \
    MD5_STEP_G(a, b, c, d, X[5], 0xd62f105d, 5)   MD5_STEP_G(d, a, b, c, X[10], 0x02441453, 9) \
    MD5_STEP_G(c, d, a, b, X[15], 0xd8a1e681, 14) MD5_STEP_G(b, c, d, a, X[4], 0xe7d3fbc8, 20) \
    MD5_STEP_G(a, b, c, d, X[9], 0x21e1cde6, 5)   MD5_STEP_G(d, a, b, c, X[14], 0xc33707d6, 9) \
    MD5_STEP_G(c, d, a, b, X[3], 0xf4d50d87, 14)  MD5_STEP_G(b, c, d, a, X[8], 0x455a14ed, 20) \
    MD5_STEP_G(a, b, c, d, X[13], 0xa9e3e905, 5)  MD5_STEP_G(d, a, b, c, X[2], 0xfcefa3f8, 9) \
    MD5_STEP_G(c, d, a, b, X[7], 0x676f02d9, 14)  MD5_STEP_G(b, c, d, a, X[12], 0x8d2a4c8a, 20)
#define MD5_ROUND3(X) \
    MD5_STEP(MD5_H, a, b, c, d, X[5], 0xfffa3942, 4)   MD5_STEP(MD5_H, d, a, b, c, X[8], 0x8771f681, 11) \
    MD5_STEP(MD5_H, c, d, a, b, X[11], 0x6d9d6122, 16) MD5_STEP(MD5_H, b, c, d, a, X[14], 0xfde5380c, 23) \
    MD5_STEP(MD5_H, a, b, c, d, X[1], 0xa4beea44, 4)   MD5_STEP(MD5_H, d, a, b, c, X[4], 0x4bdecfa9, 11) \
    MD5_STEP(MD5_H, c, d, a, b, X[7], 0xf6bb4b60, 16)  MD5_STEP(MD5_H, b, c, d, a, X[10], 0xbebfbc70, 23) \
    MD5_STEP(MD5_H, a, b, c, d, X[13], 0x289b7ec6, 4)  MD5_STEP(MD5_H, d, a, b, c, X[0], 0xeaa127fa, 11) \
    MD5_STEP(MD5_H, c, d, a, b, X[3], 0xd4ef3085, 16)  MD5_STEP(MD5_H, b, c, d, a, X[6], 0x04881d05, 23) \
    MD5_STEP(MD5_H, a, b, c, d, X[9], 0xd9d4d039, 4)   MD5_STEP(MD5_H, d, a, b, c, X[12], 0xe6db99e5, 11) \
    MD5_STEP(MD5_H, c, d, a, b, X[15], 0x1fa27cf8, 16) MD5_STEP(MD5_H, b, c, d, a, X[2], 0xc4ac5665, 23)
#define MD5_ROUND4(X) \
    MD5_STEP(MD5_I, a, b, c, d, X[0], 0xf4292244, 6)   MD5_STEP(MD5_I, d, a, b, c, X[7], 0x432aff97, 10) \
    MD5_STEP(MD5_I, c, d, a, b, X[14], 0xab9423a7, 15) MD5_STEP(MD5_I, b, c, d, a, X[5], 0xfc93a039, 21) \
    MD5_STEP(MD5_I, a, b, c, d, X[12], 0x655b59c3, 6)  MD5_STEP(MD5_I, d, a, b, c, X[3], 0x8f0ccc92, 10) \
    MD5_STEP(MD5_I, c, d, a, b, X[10], 0xffeff47d, 15) MD5_STEP(MD5_I, b, c, d, a, X[1], 0x85845dd1, 21) \
    MD5_STEP(MD5_I, a, b, c, d, X[8], 0x6fa87e4f, 6)   MD5_STEP(MD5_I, d, a, b, c, X[15], 0xfe2ce6e0, 10) \
    MD5_STEP(MD5_I, c, d, a, b, X[6], 0xa3014314, 15)  MD5_STEP(MD5_I, b, c, d, a, X[13], 0x4e0811a1, 21) \
    MD5_STEP(MD5_I, a, b, c, d, X[4], 0xf7537e82, 6)   MD5_STEP(MD5_I, d, a, b, c, X[11], 0xbd3af235, 10) \
    MD5_STEP(MD5_I, c, d, a, b, X[2], 0x2ad7d2bb, 15)  MD5_STEP(MD5_I, b, c, d, a, X[9], 0xeb86d391, 21)

static void md5_blocks(uint32_t state[4], const uint8_t *p, size_t blocks) {
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    for (; blocks > 0; blocks--, p += 64) {
        uint32_t X[16];
        for (int i = 0; i < 16; i++) X[i] = load_le32(p + 4 * i);
        uint32_t a0 = a, b0 = b, c0 = c, d0 = d;
        MD5_ROUND1(X) MD5_ROUND2(X) MD5_ROUND3(X) MD5_ROUND4(X)
        a += a0; b += b0; c += c0; d += d0;
    }
    state[0] = a; state[1] = b; state[2] = c; state[3] = d;
}

#if defined(__x86_64__)
static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define SHA_TARGET __attribute__((target("sha,sse4.1,ssse3")))

// Four of SHA-256's 64 rounds: message words 4i…4i+3 (loaded for the first four groups, expanded from the
// last four groups' after), two rounds an instruction. S0 holds ABEF, S1 CDGH.
#define SHA256_4ROUNDS(i) { \
    __m128i w = (i) < 4 \
        ? _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * (i))), byte_swap) \
        : _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32(W[(i) & 3], W[((i) + 1) & 3]), \
                                             _mm_alignr_epi8(W[((i) + 3) & 3], W[((i) + 2) & 3], 4)), \
                               W[((i) + 3) & 3]); \
    W[(i) & 3] = w; \
    __m128i m = _mm_add_epi32(w, _mm_loadu_si128((const __m128i *)&K256[4 * (i)])); \
    S1 = _mm_sha256rnds2_epu32(S1, S0, m); \
    S0 = _mm_sha256rnds2_epu32(S0, S1, _mm_shuffle_epi32(m, 0x0E)); }

SHA_TARGET static void md5_sha256_blocks(uint32_t md5[4], uint32_t sha[8], const uint8_t *p, size_t blocks) {
    const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&sha[0]), 0xB1);  // CDAB
    __m128i S1 = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&sha[4]), 0x1B); // EFGH
    __m128i S0 = _mm_alignr_epi8(t, S1, 8);                                          // ABEF
    S1 = _mm_blend_epi16(S1, t, 0xF0);                                               // CDGH
    uint32_t a = md5[0], b = md5[1], c = md5[2], d = md5[3];
    for (; blocks > 0; blocks--, p += 64) {
        uint32_t X[16];
        for (int i = 0; i < 16; i++) X[i] = load_le32(p + 4 * i);
        uint32_t a0 = a, b0 = b, c0 = c, d0 = d;
        __m128i S0_before = S0, S1_before = S1, W[4];
        SHA256_4ROUNDS(0) SHA256_4ROUNDS(1) SHA256_4ROUNDS(2) SHA256_4ROUNDS(3)
        MD5_ROUND1(X)
        SHA256_4ROUNDS(4) SHA256_4ROUNDS(5) SHA256_4ROUNDS(6) SHA256_4ROUNDS(7)
        MD5_ROUND2(X)
        SHA256_4ROUNDS(8) SHA256_4ROUNDS(9) SHA256_4ROUNDS(10) SHA256_4ROUNDS(11)
        MD5_ROUND3(X)
        SHA256_4ROUNDS(12) SHA256_4ROUNDS(13) SHA256_4ROUNDS(14) SHA256_4ROUNDS(15)
        MD5_ROUND4(X)
        a += a0; b += b0; c += c0; d += d0;
        S0 = _mm_add_epi32(S0, S0_before);
        S1 = _mm_add_epi32(S1, S1_before);
    }
    md5[0] = a; md5[1] = b; md5[2] = c; md5[3] = d;
    t = _mm_shuffle_epi32(S0, 0x1B);  // FEBA
    S1 = _mm_shuffle_epi32(S1, 0xB1); // DCHG
    _mm_storeu_si128((__m128i *)&sha[0], _mm_blend_epi16(t, S1, 0xF0)); // DCBA
    _mm_storeu_si128((__m128i *)&sha[4], _mm_alignr_epi8(S1, t, 8));    // HGFE
}

int hearth_digests_sha256_supported(void) {
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    int ssse3_sse41 = (ecx & bit_SSSE3) && (ecx & bit_SSE4_1);
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return 0;
    return ssse3_sse41 && (ebx & bit_SHA);
}
#else
static void md5_sha256_blocks(uint32_t md5[4], uint32_t sha[8], const uint8_t *p, size_t blocks) {
    (void)sha;
    md5_blocks(md5, p, blocks); // never called: SHA-256 is not offered here
}

int hearth_digests_sha256_supported(void) { return 0; }
#endif

static void blocks(hearth_digests *digests, const uint8_t *p, size_t count) {
    if (digests->with_sha256) md5_sha256_blocks(digests->md5, digests->sha256, p, count);
    else md5_blocks(digests->md5, p, count);
}

void hearth_digests_init(hearth_digests *digests, int with_sha256) {
    static const uint32_t md5[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
    static const uint32_t sha[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memset(digests, 0, sizeof *digests);
    memcpy(digests->md5, md5, sizeof md5);
    memcpy(digests->sha256, sha, sizeof sha);
    digests->with_sha256 = with_sha256;
}

void hearth_digests_update(hearth_digests *digests, const void *bytes, size_t count) {
    const uint8_t *p = bytes;
    size_t held = digests->length % 64;
    digests->length += count;
    if (held > 0) {
        size_t n = 64 - held < count ? 64 - held : count;
        memcpy(digests->buffer + held, p, n);
        p += n;
        count -= n;
        if (held + n < 64) return;
        blocks(digests, digests->buffer, 1);
    }
    if (count >= 64) {
        blocks(digests, p, count / 64);
        p += count / 64 * 64;
        count %= 64;
    }
    if (count > 0) memcpy(digests->buffer, p, count);
}

void hearth_digests_final(hearth_digests *digests, uint8_t md5[16], uint8_t sha256[32]) {
    uint64_t bits = digests->length * 8;
    size_t held = digests->length % 64;
    // Both pad alike (0x80, zeros, the length in bits in the last 8 bytes): MD5's little-endian, SHA-256's
    // big-endian, so the last block is made twice when SHA-256 is computed.
    uint8_t tail[128] = {0};
    memcpy(tail, digests->buffer, held);
    tail[held] = 0x80;
    size_t n = held < 56 ? 64 : 128;
    int with_sha256 = digests->with_sha256;
    uint8_t sha_tail[128];
    for (int i = 0; i < 8; i++) tail[n - 8 + i] = (uint8_t)(bits >> (8 * i));
    memcpy(sha_tail, tail, n);
    for (int i = 0; i < 8; i++) sha_tail[n - 8 + i] = (uint8_t)(bits >> (56 - 8 * i));
    if (with_sha256) { // on a copy of MD5's state: the MD5 of SHA-256's tail is thrown away
        uint32_t md5_unused[4];
        memcpy(md5_unused, digests->md5, sizeof md5_unused);
        md5_sha256_blocks(md5_unused, digests->sha256, sha_tail, n / 64);
    }
    md5_blocks(digests->md5, tail, n / 64);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) md5[4 * i + j] = (uint8_t)(digests->md5[i] >> (8 * j));
    if (with_sha256)
        for (int i = 0; i < 8; i++)
            for (int j = 0; j < 4; j++) sha256[4 * i + j] = (uint8_t)(digests->sha256[i] >> (24 - 8 * j));
}
