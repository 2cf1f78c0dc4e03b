package provider

// ParamType is the type of a configuration variable (enum fi_param_type).
type ParamType int

// Configuration variable types.
const (
	ParamString ParamType = iota // FI_PARAM_STRING
	ParamInt                     // FI_PARAM_INT
	ParamBool                    // FI_PARAM_BOOL
	ParamSize                    // FI_PARAM_SIZE_T
)

// Param describes an environment variable a provider reads (struct
// fi_param, as fi_param_define(3) declares it). `fi_info -e` lists them.
type Param struct {
	Name string // full variable name, e.g. "FI_UDP_IFACE"
	Type ParamType
	// Help is the description without the provider prefix; listings
	// print it as "udp: Specify interface name", as libfabric does.
	Help string
}

// ParamLister is implemented by providers that read environment variables
// (the fi_param_define calls of a C provider). It is optional.
type ParamLister interface {
	Params() []Param
}
