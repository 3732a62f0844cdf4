/* check.h -- the C test programs' assertion and runner.
 *
 * CHECK counts, and prints the failing line with a message, without stopping.
 * TEST_MAIN(program, TEST(a), TEST(b), ...) is a program's main: it runs the
 * tests named on its command line (every test without arguments), prints
 * "<program>: N passed, M failed" and exits non-zero on a failure.  A program
 * with options of its own parses them and calls run_tests itself. */
#ifndef DC_TEST_CHECK_H
#define DC_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

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

typedef struct test_case {
    const char *name;
    void (*run)(void);
} test_case;

#define TEST(fn) {#fn, fn}

/* Run tests[0..count) in order, or those named in names[0..n_names); 2 on an
 * unknown name, else 1 on a failure, 0 when every check passed. */
static int run_tests(const char *program, const test_case *tests, size_t count,
                     char *const *names, int n_names)
{
    size_t k;
    int i;
    for (i = 0; i < n_names; i++) {
        for (k = 0; k < count && strcmp(tests[k].name, names[i]) != 0; k++)
            ;
        if (k == count) {
            fprintf(stderr, "%s: no test %s; the tests:", program, names[i]);
            for (k = 0; k < count; k++)
                fprintf(stderr, " %s", tests[k].name);
            fprintf(stderr, "\n");
            return 2;
        }
    }
    for (k = 0; k < count; k++) {
        int before = failed;
        for (i = 0; i < n_names && strcmp(tests[k].name, names[i]) != 0; i++)
            ;
        if (n_names && i == n_names)
            continue;
        tests[k].run();
        if (failed > before)
            printf("%s: %s: %d failed\n", program, tests[k].name, failed - before);
    }
    printf("%s: %d passed, %d failed\n", program, passed, failed);
    return failed ? 1 : 0;
}

#define TEST_MAIN(program, ...)                                                            \
    int main(int argc, char **argv)                                                        \
    {                                                                                      \
        static const test_case tests[] = {__VA_ARGS__};                                    \
        return run_tests(program, tests, sizeof tests / sizeof tests[0], argv + 1,         \
                         argc - 1);                                                        \
    }

#endif
