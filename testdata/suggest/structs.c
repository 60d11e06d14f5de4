/*
 * structs.c - the struct cases of the testdata/suggest fixture (see README.md): one
 * struct per struct rule of structs.toml, each failing on structs.elf (this file built
 * plain), a cache-line group over its max_size, and, for the diff, a hot member
 * pushed off the line it shared with a group (-DNEW). FIXED builds the fixes that
 * `suggest structs.elf --rules structs.toml` proposes first; NEW -DINTO declares the
 * hot member inside the group, as `suggest structs.elf structs-new.elf` proposes.
 * Offsets in the comments are by hand (x86-64: long 8 B, int 4 B), checked against
 * pahole in FACTS.md.
 */
typedef unsigned char __u8;

#define ____cacheline_aligned __attribute__((aligned(64)))
#define __cacheline_group_begin(G) __u8 __cacheline_group_begin__##G[0]
#define __cacheline_group_end(G) __u8 __cacheline_group_end__##G[0]

/* line_start = ["hot_lock"]: at 40; the fix aligns it (64), 80 -> 128 B. */
struct ls_like {
	long a[5];
#ifdef FIXED
	long hot_lock ____cacheline_aligned;
#else
	long hot_lock;
#endif
	long b[4];
};

/* together = [["head", "tail"]]: head on line 0, tail at 72 on line 1; the fix
 * declares tail after head (88 B either way). */
struct tg_like {
	long head;
#ifdef FIXED
	long tail;
#endif
	long mid[8];
#ifndef FIXED
	long tail;
#endif
	long rest;
};

/* separate = [["lock", "count"]]: both on line 0; count declared after x lands at 88
 * on line 1 (96 B either way). */
struct sp_like {
	long lock;
#ifndef FIXED
	long count;
#endif
	long x[10];
#ifdef FIXED
	long count;
#endif
};

/* max_holes = 8: holes of 7 (after c1) and 4 (after i1), 48 B; c2 into the first
 * and i2 into the second leave one of 6, 40 B. */
struct mh_like {
	char c1;
#ifdef FIXED
	char c2;
#endif
	long l1;
	long l2;
	int i1;
#ifdef FIXED
	int i2;
#endif
	long l3;
#ifndef FIXED
	int i2;
	char c2;
#endif
};

/* max_cachelines = 2: 136 B (3 lines) with a hole of 7 after c1; c2 into it: 128 B. */
struct mc_like {
	char c1;
#ifdef FIXED
	char c2;
#endif
	long a[15];
#ifndef FIXED
	char c2;
#endif
};

/* max_size = 16: 24 B with a hole of 4 after i1; i2 into it: 16 B. */
struct ms_like {
	int i1;
#ifdef FIXED
	int i2;
#endif
	long l;
#ifndef FIXED
	int i2;
#endif
};

/* max_holes = 0: a hole of 7 after c that no member after it fits; max_growth = 0
 * needs OLD. */
struct nf_like {
	char c;
	long l;
};

/* group hot: 8 .. 52, 44 B, over its max_size = 40 by 4 B; h5 (4 B, the last declared
 * of the smallest) declared after its end marker: 8 .. 48, 40 B, 64 B either way. */
struct gs_like {
	long a;
	__cacheline_group_begin(hot);
	long h1;
	long h2;
	int h3;
	long h4[2];
#ifndef FIXED
	int h5;
#endif
	__cacheline_group_end(hot);
#ifdef FIXED
	int h5;
#endif
	long z;
};

/* Group rx: r1..r4 (0 .. 32); x[2] at 32, hot_cnt at 48 on line 0 with the group.
 * NEW adds added[2] after x: hot_cnt at 64, line 1. INTO declares hot_cnt inside the
 * group, after r4: at 32, line 0. */
struct ig_like {
	__cacheline_group_begin(rx);
	long r1;
	long r2;
	long r3;
	long r4;
#ifdef INTO
	long hot_cnt;
#endif
	__cacheline_group_end(rx);
	long x[2];
#ifdef NEW
	long added[2];
#endif
#ifndef INTO
	long hot_cnt;
#endif
	long y[4];
};

struct ls_like ls0;
struct tg_like tg0;
struct sp_like sp0;
struct mh_like mh0;
struct mc_like mc0;
struct ms_like ms0;
struct nf_like nf0;
struct gs_like gs0;
struct ig_like ig0;
long after_all;

void start(void)
{
}
