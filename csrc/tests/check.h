/* check.h -- the assertion macro of the C test programs: count, and print
 * the failing line with a message, without stopping.  Each program prints
 * "<name>: N passed, M failed" at the end and exits non-zero on failures. */
#ifndef DC_TEST_CHECK_H
#define DC_TEST_CHECK_H

#include <stdio.h>

static int passed, failed;

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (cond) {                                                                        \
            passed++;                                                                      \
        } else {                                                                           \
            failed++;                                                                      \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                    \
            printf(__VA_ARGS__);                                                           \
            printf("\n");                                                                  \
        }                                                                                  \
    } while (0)

#endif
