package fabric

// domainExt holds domain state owned by the shared machinery. Fields are
// added by the files that implement each object.
type domainExt struct{}

func (d *Domain) initExt() {}
