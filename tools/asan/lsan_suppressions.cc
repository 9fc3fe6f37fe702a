// LeakSanitizer under --config=asan (.bazelrc, --custom_malloc): Open MPI
// 4.1 (Debian's) keeps what MPI_Init allocates -- its components, the
// runtime's tables, the progress thread's events -- until the process
// exits, and MPI_Finalize frees only part of it, so every process started
// by mpirun ended with about 120 KB "leaked" in 3,000 allocations, and
// every mpirun test failed under --config=asan. None of those allocations
// is Towerflow's: the suppressions below name Open MPI's own functions, and
// no Towerflow frame. Towerflow frees what it asks MPI for (its
// communicators) before MPI_Finalize.
extern "C" {

// Open MPI and its components are built without frame pointers, so the
// fast unwinder stops at their first frame (often in a component that
// MPI_Finalize has unloaded by the time of the report) and no suppression
// could match. The slow unwinder gives whole stacks; ASAN_OPTIONS still
// overrides it.
const char* __asan_default_options() { return "fast_unwind_on_malloc=0"; }

// A frame of a leak's allocation stack matching a line suppresses it.
const char* __lsan_default_suppressions() {
  return "leak:ompi_mpi_init\n"
         "leak:ompi_mpi_finalize\n"
         "leak:orte_init\n"
         "leak:orte_finalize\n"
         "leak:event_base_loop\n";
}
}
