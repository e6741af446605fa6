/* A bijective 64-bit mixer (splitmix64): keys, seeds and unguessable ids from counters. */
#ifndef INGOT_BASE_MIX_H
#define INGOT_BASE_MIX_H

#include <stdint.h>

/** splitmix64's increment (2^64 / golden ratio, odd): x -> x + k * INGOT_MIX_GOLDEN is a bijection. */
#define INGOT_MIX_GOLDEN 0x9e3779b97f4a7c15ull
#define INGOT_MIX_MUL1   0xbf58476d1ce4e5b9ull
#define INGOT_MIX_MUL2   0x94d049bb133111ebull

/** splitmix64 of @p x: a bijection of 64-bit values whose outputs look random. Thread-safe. */
static inline uint64_t ingot_mix64(uint64_t x)
{
    x += INGOT_MIX_GOLDEN;
    x = (x ^ (x >> 30)) * INGOT_MIX_MUL1;
    x = (x ^ (x >> 27)) * INGOT_MIX_MUL2;
    return x ^ (x >> 31);
}

#endif
