"""Rank statistics the bench scripts share: ranks with ties at their mean, Spearman."""
import math


def ranks(v):
    """Each value's rank from 0 up, tied values taking the mean of their positions."""
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for t in range(i, j + 1):
            r[order[t]] = (i + j) / 2
        i = j + 1
    return r


def spearman(a, b):
    """Spearman's rank correlation of a and b; None where one of them is constant."""
    ra, rb = ranks(a), ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    den = math.sqrt(sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb))
    if den == 0:
        return None
    return sum((x - ma) * (y - mb) for x, y in zip(ra, rb)) / den
