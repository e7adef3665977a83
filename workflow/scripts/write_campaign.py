"""Write the campaign file (``results/campaign.yaml``) from the config section in ``params``."""

import yaml

snakemake = globals()["snakemake"]

with open(snakemake.log[0], "w") as log, open(snakemake.output[0], "w") as fh:
    yaml.safe_dump(dict(snakemake.params.spec), fh, sort_keys=False)
    print(f"wrote {snakemake.output[0]}", file=log)
