# Helpers of the benchmark scripts in tests/perf (sourced): medians and rows of the result
# tables, and one JSON lookup. Every figure is a ratio to a ceiling or a peer measured in the
# same run, median of REPS runs with min and max (these machines are noisy).
py=${PY:-/usr/bin/python3}
json() { $py -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval('d'+sys.argv[2]))" "$@"; }
stats() { $py -c "import statistics,sys; v=sorted(map(float,sys.argv[1:])); print('%.4g %.4g %.4g' % (statistics.median(v), v[0], v[-1]))" "$@"; }
row() { # row NAME UNIT VALUES... -> "| name | median | min | max | unit |"
  local name=$1 unit=$2; shift 2; read -r med lo hi <<<"$(stats "$@")"
  printf '| %-52s | %10s | %10s | %10s | %s |\n' "$name" "$med" "$lo" "$hi" "$unit"
}
ratio() { $py -c "import sys; print(float(sys.argv[1]) / float(sys.argv[2]))" "$1" "$2"; }
