/*
 * Elementwise comparison with per-element bounds (see numerics.h). One loop
 * serves every check: the bound of element i is computed by the caller's
 * rule, and the element whose error uses the largest share of its bound is
 * the one reported.
 */
#include "numerics.h"

#include <float.h>
#include <math.h>
#include <string.h>

static void report_reset(cmp_report_t *r, size_t n) {
    memset(r, 0, sizeof *r);
    r->n = n;
}

int within_bound(double got, double want, double bound) {
    /* An infinite reference is met only by the same infinity: its bound is
     * infinite too, and Inf <= Inf would pass any finite result. */
    double err = got == want ? 0.0 : fabs(got - want);
    return isinf(want) ? got == want
                       : err <= bound && (isfinite(bound) || got == want); /* false for NaN: on purpose */
}

double gemm_elem_bound(double absAB, int K, double eps, double c) { return c * (double)K * eps * absAB + FLT_MIN; }

/* Account one element; returns 1 if it is within bound. */
static int account(cmp_report_t *r, size_t i, double got, double want, double bound,
                   double *worst_ratio) {
    double err = got == want ? 0.0 : fabs(got - want);
    int ok = within_bound(got, want, bound);
    if (isfinite(want) && !isfinite(got)) r->nonfinite++;
    if (!ok) r->mismatches++;
    if (!isnan(r->max_abs_err) && !(err <= r->max_abs_err)) r->max_abs_err = err; /* NaN sticks */
    /* NaN sticks here too, so a report never pairs a NaN absolute error
     * with a relative error of 0. */
    if (isnan(err)) r->max_rel_err = NAN;
    else if (want != 0.0 && !isnan(r->max_rel_err) && err / fabs(want) > r->max_rel_err)
        r->max_rel_err = err / fabs(want);
    double ratio = bound > 0 ? err / bound : (err > 0 ? INFINITY : 0.0);
    /* A miss outranks every element within its bound: one that fails only
     * because its bound is infinite (a finite reference) has err / bound = 0. */
    if (isnan(ratio) || (!ok && !(ratio > 1.0))) ratio = INFINITY;
    if (i == 0 || ratio > *worst_ratio) {
        *worst_ratio = ratio;
        r->worst_index = i;
        r->worst_got = got;
        r->worst_want = want;
        r->worst_bound = bound;
    }
    return ok;
}

/* One loop for both reference types: want_d or want_f is NULL. */
static int compare_any(const float *got, const double *want_d, const float *want_f, size_t n,
                       double rtol, double atol, cmp_report_t *rep) {
    cmp_report_t local;
    cmp_report_t *r = rep ? rep : &local;
    report_reset(r, n);
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        double w = want_d ? want_d[i] : (double)want_f[i];
        account(r, i, (double)got[i], w, atol + rtol * fabs(w), &worst);
    }
    return r->mismatches == 0;
}

int compare_close(const float *got, const double *want, size_t n, double rtol, double atol,
                  cmp_report_t *rep) {
    return compare_any(got, want, NULL, n, rtol, atol, rep);
}

int compare_close_f(const float *got, const float *want, size_t n, double rtol, double atol,
                    cmp_report_t *rep) {
    return compare_any(got, NULL, want, n, rtol, atol, rep);
}

int check_gemm_bound(const float *got, const double *want, const double *absAB, int M, int N,
                     int K, double eps, double c, cmp_report_t *rep) {
    cmp_report_t local;
    cmp_report_t *r = rep ? rep : &local;
    size_t n = (size_t)M * (size_t)N;
    report_reset(r, n);
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        account(r, i, (double)got[i], want[i], gemm_elem_bound(absAB[i], K, eps, c), &worst);
    }
    return r->mismatches == 0;
}

/* ", max rel err X", or nothing where it would mislead: relative errors are
 * taken only where want != 0, so a report whose every miss is at a want of 0
 * (a value written where 0 belongs) would say "max rel err 0". */
static void rel_part(char *out, size_t len, const cmp_report_t *r) {
    if (r->mismatches > 0 && r->max_rel_err == 0.0) snprintf(out, len, "%s", "");
    else snprintf(out, len, ", max rel err %.3g", r->max_rel_err);
}

char *cmp_report_format(char *buf, size_t len, const char *what, const cmp_report_t *r) {
    char rel[48];
    rel_part(rel, sizeof rel, r);
    snprintf(buf, len,
             "%s: %zu of %zu outside bound (%zu non-finite); worst at [%zu]: got %.9g want %.9g "
             "(bound %.3g); max abs err %.3g%s",
             what, r->mismatches, r->n, r->nonfinite, r->worst_index, r->worst_got, r->worst_want,
             r->worst_bound, r->max_abs_err, rel);
    return buf;
}

char *cmp_report_format_rc(char *buf, size_t len, const char *what, const cmp_report_t *r, size_t cols) {
    if (cols == 0) return cmp_report_format(buf, len, what, r);
    char rel[48];
    rel_part(rel, sizeof rel, r);
    snprintf(buf, len,
             "%s: %zu of %zu outside bound (%zu non-finite); worst at [%zu][%zu]: got %.9g want %.9g "
             "(bound %.3g); max abs err %.3g%s",
             what, r->mismatches, r->n, r->nonfinite, r->worst_index / cols, r->worst_index % cols, r->worst_got,
             r->worst_want, r->worst_bound, r->max_abs_err, rel);
    return buf;
}

void cmp_report_print(FILE *out, const char *what, const cmp_report_t *r) {
    char line[512];
    fprintf(out, "%s\n", cmp_report_format(line, sizeof line, what, r));
}

double rel_l2_diff(const float *got, const float *ref, size_t n) {
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double d = (double)got[i] - ref[i];
        num += d * d;
        den += (double)ref[i] * ref[i];
    }
    return sqrt(num / (den > 0 ? den : 1.0));
}
