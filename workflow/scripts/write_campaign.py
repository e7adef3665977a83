"""Write a campaign or suite space file (format: docs/contracts.md) from ``params.spec``."""

from propulate.campaign.files import write_campaign_file

snakemake = globals()["snakemake"]

with open(snakemake.log[0], "w") as log:
    path = write_campaign_file(snakemake.output[0], dict(snakemake.params.spec))
    print(f"wrote {path}", file=log)
