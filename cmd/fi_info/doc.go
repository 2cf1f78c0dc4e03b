// Command fi_info lists the fabric interfaces the Go fabric library
// offers, like libfabric's fi_info(1): the same options, the same output
// and the same exit codes, so that scripts written for the C tool work
// unchanged.
//
// Usage:
//
//	fi_info [-s ADDR | -n NAME] [-P PORT] [-c CAP1|CAP2..] [-m MOD1|MOD2..]
//	        [-t EPTYPE] [-d DOMAIN] [-f FABRIC] [-a FMT] [-p PROV]
//	        [-e | -g SUBSTR] [-i SUBSTR] [-l] [-v] [--version] [-h]
//
// Without options fi_info calls GetInfo with no hints and prints one short
// block per Info; -v prints every field as fi_tostr does; -l lists the
// providers; -e and -g list the environment variables the library reads.
// When any of -c, -m, -t, -a, -p, -d, -f is given, hints are passed, with
// every mode bit set unless -m says otherwise (as the C tool does).
//
// Exit status: 0 on success, the libfabric error number when GetInfo
// fails (61 for FI_ENODATA, after printing "fi_getinfo: -61" on standard
// error), 22 for an unrecognized capability, mode, endpoint type or
// address format, 1 for a usage error or -h. When nothing matches, standard
// error holds C's line alone, byte for byte, so that scripts written for
// the C tool keep working; with FI_LOG_LEVEL=info (or debug) a log record
// follows it with the reason GetInfo returned (per provider, the hint field
// that failed, or the FI_PROVIDER exclusion).
package main
