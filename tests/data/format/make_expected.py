"""What XLA prints for hand_written.hlo, through jaxlib 0.10.2 (the oracle of the
editor formatting tests): hand_written.short.hlo is `hlo_module_from_text(text).to_string()`,
hand_written.long.hlo the same with `print_operand_shape=True`.  Run: python make_expected.py
"""
import jaxlib
from jaxlib import _hlo

assert jaxlib.__version__ == "0.10.2", jaxlib.__version__
module = _hlo.hlo_module_from_text(open("hand_written.hlo").read())
open("hand_written.short.hlo", "w").write(module.to_string())
options = _hlo.HloPrintOptions()
options.print_operand_shape = True
open("hand_written.long.hlo", "w").write(module.to_string(options))
