# Sourced by the tests where one process of an mpirun job dies, fails or
# hangs: check MODE EXPECTED... runs `mpirun -np 3 $program MODE` and fails
# the test (failed=1) unless the job exits non-zero, no process prints
# "finished all its steps", and the output matches every EXPECTED (an
# extended regular expression).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
unset XML_OUTPUT_FILE TEST_PREMATURE_EXIT_FILE GTEST_OUTPUT
failed=0
check() {
  local mode="$1"
  shift
  local out status
  out="$(mpirun -np 3 --oversubscribe "$program" "$mode" 2>&1)"
  status=$?
  echo "=== $mode (exit $status)"
  echo "$out"
  if [ "$status" -eq 0 ]; then
    echo "FAIL ($mode): the job exited 0 although a process stopped"
    failed=1
  fi
  if grep -q "finished all its steps" <<<"$out"; then
    echo "FAIL ($mode): a process went on past the stopped one"
    failed=1
  fi
  for expected in "$@"; do
    if ! grep -qE "$expected" <<<"$out"; then
      echo "FAIL ($mode): the output does not say: $expected"
      failed=1
    fi
  done
}
