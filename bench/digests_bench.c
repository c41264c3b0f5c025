// The digests of one stored 100 KiB object: CDigests' one pass (SHA-256 and MD5 together) against OpenSSL's
// MD5 and SHA-256 run one after the other (the same assembly lineage as BoringSSL's, which Hearth used before).
//
//     cc -O2 -Wno-deprecated-declarations -o /tmp/digests_bench bench/digests_bench.c Sources/CDigests/digests.c \
//         -I Sources/CDigests/include -lcrypto      # OpenSSL's headers: apt-get install -y libssl-dev
//     /tmp/digests_bench [rounds]
//
// Prints microseconds per object for each, best of five runs of ROUNDS (default 3,000) objects, and checks that
// both ways give the same digests.
#include <openssl/md5.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "digests.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 3000;
    size_t size = 100 * 1024;
    unsigned char *bytes = malloc(size);
    for (size_t i = 0; i < size; i++) bytes[i] = (unsigned char)rand();
    unsigned char md5[16], sha[32], md5b[16], shab[32];
    int one_pass = hearth_digests_sha256_supported();
    double best[3] = {1e9, 1e9, 1e9};
    for (int run = 0; run < 5; run++) {
        double t = now();
        for (int r = 0; r < rounds; r++) { MD5(bytes, size, md5); SHA256(bytes, size, sha); }
        double apart = (now() - t) / rounds * 1e6;
        t = now();
        for (int r = 0; r < rounds; r++) MD5(bytes, size, md5);
        double md5_alone = (now() - t) / rounds * 1e6;
        t = now();
        for (int r = 0; r < rounds; r++) {
            hearth_digests d;
            hearth_digests_init(&d, one_pass);
            hearth_digests_update(&d, bytes, size);
            hearth_digests_final(&d, md5b, shab);
        }
        double together = (now() - t) / rounds * 1e6;
        if (apart < best[0]) best[0] = apart;
        if (md5_alone < best[1]) best[1] = md5_alone;
        if (together < best[2]) best[2] = together;
    }
    int same = memcmp(md5, md5b, 16) == 0 && (!one_pass || memcmp(sha, shab, 32) == 0);
    printf("100 KiB: OpenSSL MD5 then SHA-256 %.1f us (MD5 alone %.1f); CDigests %s %.1f us (%.2fx); digests %s\n",
           best[0], best[1], one_pass ? "SHA-256 and MD5 in one pass" : "MD5 only (no SHA extensions)", best[2],
           best[2] / best[0], same ? "equal" : "DIFFER");
    return same ? 0 : 1;
}
