/*
 * ext.c - a second unit for the typed fixture: the out-of-line callees of
 * typed.c, so that its calls are opaque (nothing is known about what they
 * clobber or write).
 */
#include "typed.h"

noinline void work(void *p)
{
	asm volatile("" : : "r"(p) : "memory");
}

noinline void __fput(struct file *f)
{
	f->f_flags = 0;
	f->f_dentry = NULL;
}

noinline void __mmput(struct mm *mm)
{
	mm->total_vm = 0;
	mm->map_count = 0;
}

/* Cold, like the kernel's refcount saturation warnings. */
noinline void refcount_warn(struct file *f)
{
	asm volatile("ud2 # %0" : : "r"(f));
}
