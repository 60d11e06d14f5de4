/*
 * fn.c - the functions of the testdata/suggest fixture, a unit of their own so that
 * -falign-functions=64 can apply to this file alone. Sizes are fixed with .skip so
 * that addresses do not depend on code generation:
 *   grow_fn      0x30 bytes of body in OLD, 0x40 in NEW;
 *   futex_wait   known hot: at +0x40 (phase 0x00) in OLD, +0x50 in NEW;
 *   futex_wake   known hot: phase 0x20 in OLD, 0x30 in NEW;
 *   tail_fn      after them.
 * FIX_FN puts __aligned(64) on futex_wait (what `suggest` proposes).
 */
#define noinline __attribute__((noinline, used))
#define __aligned(n) __attribute__((aligned(n)))
#define BODY(n) asm volatile(".skip " #n ", 0x90")

noinline void start(void)
{
	BODY(0x0f);
}

noinline void grow_fn(void)
{
#ifdef NEW
	BODY(0x3f);
#else
	BODY(0x2f);
#endif
}

#ifdef FIX_FN
__aligned(64)
#endif
noinline void futex_wait(void)
{
	BODY(0x1f);
}

noinline void futex_wake(void)
{
	BODY(0x1f);
}

noinline void tail_fn(void)
{
	BODY(0x1f);
}
