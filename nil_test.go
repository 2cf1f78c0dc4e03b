package fabric

import (
	"errors"
	"go/ast"
	"reflect"
	"testing"
)

// Every exported method of every object type, called on a nil receiver
// with zero arguments, returns an error matching ErrInval (or zero values
// when it has no error result); none panics. This is the *os.File
// behaviour. (A zero-value struct such as &Endpoint{} is not a valid
// object; only nil and constructed objects are handled.)

// nilObjects holds a nil pointer of every object type. Reflection cannot
// list a package's types, so TestNilReceivers checks this registry against
// the source: every exported struct type with a Close method must be here.
var nilObjects = []any{
	(*Fabric)(nil), (*Domain)(nil), (*Endpoint)(nil), (*PassiveEndpoint)(nil), (*ScalableEndpoint)(nil),
	(*STX)(nil), (*SRX)(nil), (*AV)(nil), (*MR)(nil), (*CQ)(nil), (*Cntr)(nil), (*EQ)(nil),
	(*Wait)(nil), (*Poll)(nil), (*AVSet)(nil),
}

// objectTypes returns the names of the exported struct types of the root
// package (declared here, not aliased) that have a Close method.
func objectTypes(t *testing.T) []string {
	var names []string
	for _, ty := range packageDoc(t, ".", "github.com/gofabric/fabric").Types {
		ts, ok := ty.Decl.Specs[0].(*ast.TypeSpec)
		if !ok || ts.Assign.IsValid() || !ast.IsExported(ty.Name) {
			continue
		}
		if _, ok := ts.Type.(*ast.StructType); !ok {
			continue
		}
		for _, m := range ty.Methods {
			if m.Name == "Close" {
				names = append(names, ty.Name)
				break
			}
		}
	}
	return names
}

func TestNilReceivers(t *testing.T) {
	have := map[string]bool{}
	for _, obj := range nilObjects {
		have[reflect.TypeOf(obj).Elem().Name()] = true
	}
	found := objectTypes(t)
	if len(found) < len(nilObjects) {
		t.Fatalf("the source scan found only %v", found)
	}
	for _, name := range found {
		if !have[name] {
			t.Errorf("object type %s (exported, with Close) is missing from nilObjects", name)
		}
	}
	errType := reflect.TypeFor[error]()
	for _, obj := range nilObjects {
		v := reflect.ValueOf(obj)
		typ := v.Type()
		for i := 0; i < typ.NumMethod(); i++ {
			m := typ.Method(i)
			t.Run(typ.Elem().Name()+"."+m.Name, func(t *testing.T) {
				ft := m.Func.Type()
				args := []reflect.Value{v}
				for j := 1; j < ft.NumIn(); j++ {
					in := ft.In(j)
					if ft.IsVariadic() && j == ft.NumIn()-1 {
						break
					}
					args = append(args, reflect.Zero(in))
				}
				var out []reflect.Value
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Fatalf("panic on a nil receiver: %v", r)
						}
					}()
					out = m.Func.Call(args)
				}()
				for k, o := range out {
					if ft.Out(k) != errType {
						continue
					}
					err, _ := o.Interface().(error)
					if !errors.Is(err, ErrInval) {
						t.Errorf("error result %v, want ErrInval", err)
					}
				}
			})
		}
	}
}
