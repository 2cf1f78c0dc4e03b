package fabric

import (
	"errors"
	"reflect"
	"testing"
)

// Every exported method of every object type, called on a nil receiver
// with zero arguments, returns an error matching ErrInval (or zero values
// when it has no error result); none panics. This is the *os.File
// behaviour.

func TestNilReceivers(t *testing.T) {
	types := []any{
		(*Fabric)(nil), (*Domain)(nil), (*Endpoint)(nil), (*PassiveEndpoint)(nil), (*ScalableEndpoint)(nil),
		(*STX)(nil), (*SRX)(nil), (*AV)(nil), (*MR)(nil), (*CQ)(nil), (*Cntr)(nil), (*EQ)(nil),
	}
	errType := reflect.TypeFor[error]()
	for _, obj := range types {
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
