import sys

from weathercli import describe

latitude, longitude = (float(value) for value in sys.argv[1:3])
print(describe(latitude, longitude))
