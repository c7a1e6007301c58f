/*-------------------------------------------------------------------------
 * unit_tap.h
 *		The TAP output of walscale's unit programs (the C files of t/unit), which
 *		t/WalscaleTest.pm's run_unit_program() builds with the server's
 *		compiler and flags and passes to Test::More.
 *
 * ok() prints a test line; one failing while unit_tap_todo names a known
 * shortfall is a TODO (Test::More reports it and does not count it as a
 * failure); unit_tap_quiet counts without printing, for a program that
 * prints a report instead.  unit_tap_done() prints the plan and the
 * failures and gives the exit status.
 *
 * Copyright (c) 2026, walscale developers
 *-------------------------------------------------------------------------
 */
#ifndef WALSCALE_UNIT_TAP_H
#define WALSCALE_UNIT_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int	tests_run = 0;
static int	tests_failed = 0;
static int	tests_todo_failed = 0;

/* the shortfall the next ok() is known to have, or NULL */
static const char *unit_tap_todo = NULL;

/* count, print nothing */
static bool unit_tap_quiet = false;

static inline void ok(bool pass, const char *fmt,...) pg_attribute_printf(2, 3);

static inline void
ok(bool pass, const char *fmt,...)
{
	va_list		args;

	tests_run++;
	if (!pass && unit_tap_todo == NULL)
		tests_failed++;
	if (!pass && unit_tap_todo != NULL)
		tests_todo_failed++;
	if (unit_tap_quiet)
		return;
	printf("%s %d - ", pass ? "ok" : "not ok", tests_run);
	va_start(args, fmt);
	vprintf(fmt, args);
	va_end(args);
	if (unit_tap_todo != NULL)
		printf(" # TODO %s", unit_tap_todo);
	printf("\n");
}

static inline void is_int(int got, int expected, const char *fmt,...) pg_attribute_printf(3, 4);

static inline void
is_int(int got, int expected, const char *fmt,...)
{
	va_list		args;
	char		what[256];

	va_start(args, fmt);
	vsnprintf(what, sizeof(what), fmt, args);
	va_end(args);
	ok(got == expected, "%s", what);
	if (got != expected)
		printf("#   got %d, expected %d\n", got, expected);
}

/* the plan and the failures; the program's exit status */
static inline int
unit_tap_done(void)
{
	printf("1..%d\n", tests_run);
	if (tests_todo_failed > 0)
		printf("# %d of %d TODO\n", tests_todo_failed, tests_run);
	if (tests_failed > 0)
		printf("# %d of %d failed\n", tests_failed, tests_run);
	return tests_failed > 0 ? 1 : 0;
}

#endif							/* WALSCALE_UNIT_TAP_H */
