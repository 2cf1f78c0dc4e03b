// Package cntr is the counter machinery (fi_cntr(3)) behind fabric.Cntr: a
// success value and an error value, updated by providers through
// provider.CntrOwner (Inc, IncErr) and by the application (add, set),
// read with progress of the bound sources, and waited on with the spin and
// park machinery of package progress.
//
// Inc, IncErr, Read and ReadErr do not allocate and take no lock.
package cntr
