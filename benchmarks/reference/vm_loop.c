/* vm_loop.c -- the expression VM on the six problems of benchmarks/problems.py,
 * for A/B builds of csrc/ (instruction counts under callgrind, or CPU time).
 *
 *   cc -O2 -I csrc/include vm_loop.c <build>/csrc/libdecido_c.a -lm -o vm_loop
 *   valgrind --tool=callgrind --callgrind-out-file=/dev/null ./vm_loop 20
 *   ./vm_loop 2000 time        # CPU seconds per phase
 *
 * Each round: dc_eval_many over 64 rows and dc_gradient at one point, n in
 * {10, 100, 1000}, for every problem; the argument is the number of rounds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decido.h"

static const char *const problems[] = {
    "10*n + sum(x**2 - 10*cos(2*pi*x))",
    "-20*exp(-0.2*sqrt(mean(x**2))) - exp(mean(cos(2*pi*x))) + 20 + e",
    "sum(100*(x[1:]-x[:-1]**2)**2 + (1-x[:-1])**2)",
    "1 + sum(x**2)/4000 - prod(cos(x/sqrt(i)))",
    "418.9828872724338*n - sum(x*sin(sqrt(abs(x))))",
    "sum(x**4 - 16*x**2 + 5*x)/2",
};
enum { NP = sizeof problems / sizeof problems[0], P = 64 };

int main(int argc, char **argv)
{
    static const int64_t dims[3] = {10, 100, 1000};
    long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 10, r;
    int timed = argc > 2 && strcmp(argv[2], "time") == 0;
    double sink = 0.0, t_eval = 0.0, t_grad = 0.0;
    size_t k, d, j;
    for (d = 0; d < 3; d++) {
        int64_t n = dims[d];
        double *X = malloc((size_t)(P * n) * sizeof(double)), *g = malloc((size_t)n * sizeof(double));
        double out[P], v;
        for (j = 0; j < (size_t)(P * n); j++)
            X[j] = -3.0 + 6.0 * (double)((j * 2654435761u) % 1000u) / 1000.0;
        for (k = 0; k < NP; k++) {
            dc_options o;
            dc_program *p = NULL;
            dc_workspace *ws;
            dc_error err;
            clock_t c0, c1, c2;
            dc_options_init(&o);
            o.n = n;
            if (dc_compile(problems[k], strlen(problems[k]), &o, &p, &err) != DC_OK) {
                fprintf(stderr, "%s: %s\n", problems[k], err.message);
                return 1;
            }
            ws = dc_workspace_new(p, NULL);
            c0 = clock();
            for (r = 0; r < rounds; r++) {
                dc_eval_many(p, ws, X, P, (size_t)n, out);
                sink += out[r % P];
            }
            c1 = clock();
            for (r = 0; r < rounds; r++) {
                dc_gradient(p, ws, X + (r % P) * n, &v, g);
                sink += v + g[0];
            }
            c2 = clock();
            t_eval += (double)(c1 - c0) / CLOCKS_PER_SEC;
            t_grad += (double)(c2 - c1) / CLOCKS_PER_SEC;
            dc_workspace_free(ws);
            dc_program_free(p);
        }
        free(X);
        free(g);
    }
    if (timed)
        printf("eval_many %.4f s  gradient %.4f s  (checksum %.6g)\n", t_eval, t_grad, sink);
    else
        printf("checksum %.17g\n", sink);
    return 0;
}
