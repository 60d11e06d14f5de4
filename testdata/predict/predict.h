/* predict.h - the kernel's spellings the cases need, and the declarations a header
 * holds: a per-CPU variable declared with its section (DECLARE_PER_CPU, which makes
 * GCC's symbol of it there), read-mostly data declared __read_mostly. */
#define __section(s) __attribute__((__section__(s)))
#define __read_mostly __section(".data..read_mostly")
#define ____cacheline_aligned_in_smp __attribute__((__aligned__(64)))
#define DEFINE_PER_CPU(type, name) __section(".data..percpu") __typeof__(type) name
#define DEFINE_PER_CPU_ALIGNED(type, name) \
	__section(".data..percpu..shared_aligned") __typeof__(type) name ____cacheline_aligned_in_smp
#define DECLARE_PER_CPU(type, name) extern DEFINE_PER_CPU(type, name)
#define DECLARE_PER_CPU_ALIGNED(type, name) extern DEFINE_PER_CPU_ALIGNED(type, name)

/* struct mce's stand-in: 128 bytes of u64. */
struct rec { unsigned long w[16]; };
#ifdef DECLARE_ALIGNED
DECLARE_PER_CPU_ALIGNED(struct rec, seen_g);
#else
DECLARE_PER_CPU(struct rec, seen_g);
#endif
/* Read-mostly data a header declares with its section (sched.h's scheduler_running). */
extern int hdr_running __read_mostly;
extern int hdr_features __read_mostly;
