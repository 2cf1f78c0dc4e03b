module github.com/gofabric/fabric/cabi

go 1.26.0

require github.com/gofabric/fabric v0.0.0

require golang.org/x/sys v0.49.0 // indirect

replace github.com/gofabric/fabric => ../
