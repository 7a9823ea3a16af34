import sys
from pathlib import Path

from dusize import describe

for argument in sys.argv[1:] or ["."]:
    print(describe(Path(argument)))
