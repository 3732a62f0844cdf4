/* objectives.h -- objectives shared by the C test programs (dc_objective_fn). */
#ifndef DC_TEST_OBJECTIVES_H
#define DC_TEST_OBJECTIVES_H

#include <stddef.h>

/* sum_j (x_j - 0.3)^2: minimum 0 at x = 0.3 */
static int sphere(void *ud, const double *X, size_t rows, size_t n, double *f)
{
    size_t r, j;
    (void)ud;
    for (r = 0; r < rows; r++) {
        double s = 0.0;
        for (j = 0; j < n; j++)
            s += (X[r * n + j] - 0.3) * (X[r * n + j] - 0.3);
        f[r] = s;
    }
    return 0;
}

#endif
