/*-------------------------------------------------------------------------
 *
 * walscale_common.c
 *		What every walscale file needs: whether the core patch is in
 *		effect, whether walscale was preloaded, and the checks of both.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/guc.h"

#include "walscale.h"

bool		walscale_core_active = false;
bool		walscale_shmem_attached = false;

/*
 * Why the core patch is not in effect, as a sentence for an errdetail or a
 * view; only when walscale_core_present() is false.
 */
char *
walscale_core_missing_reason(void)
{
	/* the running server's version, not that of the headers built against */
	if (&WalscaleCoreVersion == NULL)
		return psprintf("This server is PostgreSQL %s without walscale's core patch.",
						GetConfigOption("server_version", false, false));
	return psprintf("This server has version %d of walscale's core patch, and this walscale module needs version %d.",
					WalscaleCoreVersion, WALSCALE_CORE_VERSION);
}

void
walscale_require_preloaded(void)
{
	if (!walscale_shmem_attached)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("walscale must be loaded via \"shared_preload_libraries\"")));
}

/*
 * For the SQL functions whose figures only the core patch keeps.
 */
void
walscale_require_core(const char *what)
{
	walscale_require_preloaded();
	if (!walscale_core_active)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s needs walscale's core patch", what),
				 errdetail("%s", walscale_core_missing_reason()),
				 errhint("walscale_settings and walscale_setting_status show what this server runs with.")));
}
