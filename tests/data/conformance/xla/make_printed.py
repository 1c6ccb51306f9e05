"""XLA's printing of every `parses` record of hlo_parser.jsonl, through jaxlib 0.10.2.

Writes hlo_parser_printed.jsonl: one line per `parses` record, in the same order, with
  name   the record's name
  short  jaxlib._hlo.hlo_module_from_text(hlo).to_string()  (HloPrintOptions() defaults)
  long   the same with print_operand_shape=True (the form of XLA's HloParserTestLong table)
  short_all_constants, long_all_constants  (only where they differ) the same with
         print_large_constants=True: the default prints constants of more than 10
         elements as `{...}`, which a formatter cannot do without losing the values.

Run from this directory with jax/jaxlib 0.10.2 installed:  python make_printed.py
"""
import json

import jaxlib
from jaxlib import _hlo

assert jaxlib.__version__ == "0.10.2", jaxlib.__version__


def printed(module, **options):
    o = _hlo.HloPrintOptions()
    for key, value in options.items():
        setattr(o, key, value)
    return module.to_string(o)


with open("hlo_parser_printed.jsonl", "w") as out:
    for line in open("hlo_parser.jsonl"):
        record = json.loads(line)
        if record["expect"] != "parses":
            continue
        module = _hlo.hlo_module_from_text(record["hlo"])
        row = {
            "name": record["name"],
            "short": module.to_string(),
            "long": printed(module, print_operand_shape=True),
        }
        full = printed(module, print_large_constants=True)
        if full != row["short"]:
            row["short_all_constants"] = full
            row["long_all_constants"] = printed(
                module, print_large_constants=True, print_operand_shape=True
            )
        out.write(json.dumps(row) + "\n")
