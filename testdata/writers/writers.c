/*
 * writers.c - the testdata/writers fixture: lists of writers ordered by evidence.
 * Each object and each member is written by three functions: one on the built-in
 * known-hot list (copy_process, futex_wake) and two without evidence, one named
 * before it and one after (a_rare_reset, zap_*), so that a list by name alone would
 * not put the hot writer first.
 *   nr_forks (a global) is written directly by the three;
 *   struct fstats's member forks is written through a pointer by the three (the
 *   typed map's type-level writers), and fstats_g is an instance of it.
 * build.sh links it with ../src/kernel.lds; FACTS.md holds nm's and objdump's view.
 */
struct fstats {
	long forks;
	long wakes;
};

long nr_forks;
struct fstats fstats_g;

void a_rare_reset(struct fstats *s)
{
	nr_forks = 0;
	s->forks = 0;
}

void copy_process(struct fstats *s)
{
	nr_forks++;
	s->forks++;
}

void futex_wake(struct fstats *s)
{
	s->wakes++;
}

void zap_forks(struct fstats *s)
{
	nr_forks = -1;
	s->forks = -1;
}

void _start(void)
{
	a_rare_reset(&fstats_g);
	copy_process(&fstats_g);
	futex_wake(&fstats_g);
	zap_forks(&fstats_g);
}
