# One Snakemake run per campaign at a time (propulate.campaign.lock): `snakemake --unlock`
# removes Snakemake's lock even while its run goes on, and a second run would then truncate
# the first's logs and write report.html with it. Dry runs and jobs run no handlers.

from propulate.campaign.lock import hold, let_go


onstart:
    hold(C.root)


onsuccess:
    let_go()


onerror:
    let_go()
