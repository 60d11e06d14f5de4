/* rec.h - the struct every variant resizes: shaped like struct mce (an array of
 * u64 registers and small fields), embedded by value in struct holder. */
typedef unsigned long long u64;
typedef struct { int counter; } atomic_t;

struct rec {
	u64 status;
	u64 addr; REC_AFTER_ADDR
	u64 misc;
	u64 regs[9];
	unsigned int cpu;
	unsigned char bank;
	unsigned char kind; REC_TAIL
#ifdef GROW
	u64 added;		/* the GROW variant: +8 B, as struct mce grew */
#endif
};

struct holder {
	atomic_t users;
	struct rec last;
	long count;
};

#define __percpu_sec(s) __attribute__((section(".data..percpu" s)))
#define DEFINE_PER_CPU(type, name) __percpu_sec("") __typeof__(type) name
#define DEFINE_PER_CPU_ALIGNED(type, name) \
	__percpu_sec("..shared_aligned") __typeof__(type) name __attribute__((aligned(64)))
#define ____cacheline_aligned_in_smp __attribute__((aligned(64)))
#define __cacheline_aligned \
	__attribute__((aligned(64), section(".data..cacheline_aligned")))
