/* What a fresh process pays to write an HDF5 file of a run file's shape, without normdyn: the floor
 * under `normdyn run` of a small system. bench/cli_overhead.py --floor times it beside normdyn,
 * with the counts of normdyn's own run file.
 *
 *   normdyn_bench_hdf5_floor                      exits at once (the start of a process linked with HDF5)
 *   normdyn_bench_hdf5_floor OUT G D X A F        creates OUT with G groups, D small fixed datasets,
 *                                                 X extendable chunked datasets of F doubles each
 *                                                 (written in one piece) and A integer attributes
 *
 * The file format is the run file's (HDF5 1.10 and later, which SWMR needs); everything else is
 * HDF5's defaults. Exit code 1 if a call fails. */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>

static int fail(const char* what) {
  fprintf(stderr, "hdf5_floor: %s failed\n", what);
  return 1;
}

int main(int argc, char** argv) {
  if (argc == 1) return 0;
  if (argc != 7) {
    fprintf(stderr, "usage: %s [OUT GROUPS FIXED EXTENDABLE ATTRIBUTES FRAMES]\n", argv[0]);
    return 2;
  }
  const long groups = atol(argv[2]), fixed = atol(argv[3]), extendable = atol(argv[4]), attributes = atol(argv[5]),
             frames = atol(argv[6]);
  const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_libver_bounds(fapl, H5F_LIBVER_V110, H5F_LIBVER_LATEST);
  const hid_t file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  if (file < 0) return fail("H5Fcreate");
  H5Pclose(fapl);

  hid_t* holders = malloc(sizeof(hid_t) * (size_t)(groups + 1));
  holders[0] = file;
  char name[64];
  for (long g = 0; g < groups; ++g) {
    snprintf(name, sizeof name, "g%ld", g);
    holders[g + 1] = H5Gcreate2(file, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (holders[g + 1] < 0) return fail("H5Gcreate2");
  }

  const hsize_t small = 8;
  const hid_t small_space = H5Screate_simple(1, &small, NULL);
  const double zeros[8] = {0};
  for (long k = 0; k < fixed; ++k) {
    snprintf(name, sizeof name, "fixed%ld", k);
    const hid_t d = H5Dcreate2(groups > 0 ? holders[1 + k % groups] : file, name, H5T_NATIVE_DOUBLE, small_space,
                               H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (d < 0 || H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, zeros) < 0) return fail("fixed dataset");
    H5Dclose(d);
  }
  H5Sclose(small_space);

  const hsize_t empty = 0, unlimited = H5S_UNLIMITED, chunk = 1024, count = (hsize_t)frames, start = 0;
  double* values = calloc((size_t)(frames > 0 ? frames : 1), sizeof(double));
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, &chunk);
  for (long k = 0; k < extendable; ++k) {
    snprintf(name, sizeof name, "series%ld", k);
    const hid_t space = H5Screate_simple(1, &empty, &unlimited);
    const hid_t d = H5Dcreate2(groups > 0 ? holders[1 + k % groups] : file, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT,
                               dcpl, H5P_DEFAULT);
    if (d < 0) return fail("H5Dcreate2");
    H5Sclose(space);
    if (frames > 0) {
      if (H5Dset_extent(d, &count) < 0) return fail("H5Dset_extent");
      const hid_t file_space = H5Dget_space(d);
      const hid_t memory = H5Screate_simple(1, &count, NULL);
      H5Sselect_hyperslab(file_space, H5S_SELECT_SET, &start, NULL, &count, NULL);
      if (H5Dwrite(d, H5T_NATIVE_DOUBLE, memory, file_space, H5P_DEFAULT, values) < 0) return fail("H5Dwrite");
      H5Sclose(memory);
      H5Sclose(file_space);
    }
    H5Dclose(d);
  }
  H5Pclose(dcpl);
  free(values);

  const hid_t scalar = H5Screate(H5S_SCALAR);
  for (long k = 0; k < attributes; ++k) {
    snprintf(name, sizeof name, "attribute%ld", k);
    const long long value = k;
    const hid_t a = H5Acreate2(holders[k % (groups + 1)], name, H5T_NATIVE_LLONG, scalar, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0 || H5Awrite(a, H5T_NATIVE_LLONG, &value) < 0) return fail("attribute");
    H5Aclose(a);
  }
  H5Sclose(scalar);

  for (long g = 0; g < groups; ++g) H5Gclose(holders[g + 1]);
  free(holders);
  if (H5Fclose(file) < 0) return fail("H5Fclose");
  return 0;
}
