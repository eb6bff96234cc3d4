package model

import (
	"reflect"
	"testing"
	"unsafe"
)

// The partition table is a refresh's largest object, a row per partition:
// a field that holds a pointer (a string, a time.Time, a slice) makes the
// garbage collector walk every row of it at every cycle.
func TestPartitionLagHoldsNoPointer(t *testing.T) {
	var walk func(reflect.Type, string)
	walk = func(ty reflect.Type, path string) {
		switch ty.Kind() {
		case reflect.Struct:
			for i := range ty.NumField() {
				walk(ty.Field(i).Type, path+"."+ty.Field(i).Name)
			}
		case reflect.Array:
			walk(ty.Elem(), path+"[]")
		case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		default:
			t.Errorf("PartitionLag%s is a %s: it holds a pointer", path, ty.Kind())
		}
	}
	walk(reflect.TypeFor[PartitionLag](), "")
	t.Logf("a row is %d bytes", unsafe.Sizeof(PartitionLag{}))
}
