/*
 * A tiny test harness: CHECK* print file:line and the values on failure and
 * count failures; CHECK_DONE() prints "N passed, N failed" and returns the exit
 * code (non-zero on any failure).
 */
#ifndef CONVSEL_CHECK_H
#define CONVSEL_CHECK_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int check_passed, check_failed;

#define CHECK(cond)                                                                               \
    do {                                                                                          \
        if (cond) {                                                                               \
            check_passed++;                                                                       \
        } else {                                                                                  \
            check_failed++;                                                                       \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);              \
        }                                                                                         \
    } while (0)

#define CHECK_MSG(cond, ...)                                                                      \
    do {                                                                                          \
        if (cond) {                                                                               \
            check_passed++;                                                                       \
        } else {                                                                                  \
            check_failed++;                                                                       \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond);              \
            fprintf(stderr, __VA_ARGS__);                                                         \
            fputc('\n', stderr);                                                                  \
        }                                                                                         \
    } while (0)

#define CHECK_EQ(a, b)                                                                            \
    do {                                                                                          \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b);                           \
        if (check_a_ == check_b_) {                                                               \
            check_passed++;                                                                       \
        } else {                                                                                  \
            check_failed++;                                                                       \
            fprintf(stderr, "%s:%d: CHECK_EQ(%s, %s) failed: %lld != %lld\n", __FILE__, __LINE__, \
                    #a, #b, check_a_, check_b_);                                                  \
        }                                                                                         \
    } while (0)

#define CHECK_STR(a, b)                                                                           \
    do {                                                                                          \
        const char *check_a_ = (a), *check_b_ = (b);                                              \
        if (check_a_ && check_b_ && strcmp(check_a_, check_b_) == 0) {                            \
            check_passed++;                                                                       \
        } else {                                                                                  \
            check_failed++;                                                                       \
            fprintf(stderr, "%s:%d: CHECK_STR(%s, %s) failed: \"%s\" != \"%s\"\n", __FILE__,     \
                    __LINE__, #a, #b, check_a_ ? check_a_ : "(null)",                             \
                    check_b_ ? check_b_ : "(null)");                                              \
        }                                                                                         \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                     \
    do {                                                                                          \
        double check_a_ = (double)(a), check_b_ = (double)(b), check_t_ = (double)(tol);          \
        if (fabs(check_a_ - check_b_) <= check_t_) {                                              \
            check_passed++;                                                                       \
        } else {                                                                                  \
            check_failed++;                                                                       \
            fprintf(stderr, "%s:%d: CHECK_NEAR(%s, %s, %s) failed: %.9g vs %.9g (diff %.3g)\n",   \
                    __FILE__, __LINE__, #a, #b, #tol, check_a_, check_b_,                         \
                    fabs(check_a_ - check_b_));                                                   \
        }                                                                                         \
    } while (0)

#define CHECK_DONE()                                                                              \
    (printf("%d passed, %d failed\n", check_passed, check_failed), check_failed ? 1 : 0)

#endif
