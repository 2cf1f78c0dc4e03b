// Package testutil holds what the module's tests share: the goroutine and
// file-descriptor leak check every TestMain runs. It is imported only by
// test files (internal/archtest enforces this).
package testutil
