"""Go changes shaped after real bugs (a response body never closed, SQL built with Sprintf, a
range check that can never be true, a map written from many goroutines, a failed commit
reported as success, an authorization check removed) and clean ones (a rename, a table
test, a module bump). Written with spaces here, with tabs in the repository (`tabs`)."""

from __future__ import annotations

from ..case import Case, Defect, line_of, tabs

STATUS_BASE = tabs('''package health

import "net/http"

// Client is the HTTP client health checks use.
var Client = &http.Client{}
''')
STATUS = STATUS_BASE + tabs('''
// Status returns the HTTP status code of a GET to url.
func Status(url string) (int, error) {
    resp, err := Client.Get(url)
    if err != nil {
        return 0, err
    }
    return resp.StatusCode, nil
}
''')

USERS_BASE = tabs('''package store

import "database/sql"

type User struct {
    ID    int64
    Email string
}

func UserByID(db *sql.DB, id int64) (*User, error) {
    u := &User{ID: id}
    err := db.QueryRow("SELECT email FROM users WHERE id = $1", id).Scan(&u.Email)
    return u, err
}
''')
USERS = USERS_BASE.replace(
    'import "database/sql"', 'import (\n\t"database/sql"\n\t"fmt"\n)') + tabs('''
func UserByName(db *sql.DB, name string) (*User, error) {
    u := &User{}
    query := fmt.Sprintf("SELECT id, email FROM users WHERE name = '%s'", name)
    err := db.QueryRow(query).Scan(&u.ID, &u.Email)
    return u, err
}
''')

CONFIG_BASE = tabs('''package config

import "fmt"

type Server struct {
    Host string
    Port int
}

func (s Server) Addr() string {
    return fmt.Sprintf("%s:%d", s.Host, s.Port)
}
''')
CONFIG = CONFIG_BASE + tabs('''
// Validate says what is wrong with the settings, if anything.
func (s Server) Validate() error {
    if s.Host == "" {
        return fmt.Errorf("host is empty")
    }
    if s.Port < 1 && s.Port > 65535 {
        return fmt.Errorf("port %d is out of range", s.Port)
    }
    return nil
}
''')

CACHE_BASE = tabs('''package cache

type Cache struct {
    items map[string][]byte
}

func New() *Cache {
    return &Cache{items: map[string][]byte{}}
}

func (c *Cache) Get(key string) ([]byte, bool) {
    v, ok := c.items[key]
    return v, ok
}
''')
CACHE = CACHE_BASE.replace('package cache\n', 'package cache\n\nimport "sync"\n') + tabs('''
// Warm loads every key at once, one goroutine a key.
func (c *Cache) Warm(keys []string, load func(string) []byte) {
    var wg sync.WaitGroup
    for _, key := range keys {
        wg.Add(1)
        go func(k string) {
            defer wg.Done()
            c.items[k] = load(k)
        }(key)
    }
    wg.Wait()
}
''')

TRANSFER_BASE = tabs('''package bank

import "database/sql"

const (
    debit  = "UPDATE accounts SET cents = cents - $1 WHERE id = $2"
    credit = "UPDATE accounts SET cents = cents + $1 WHERE id = $2"
)

func Transfer(db *sql.DB, from, to int64, cents int64) error {
    tx, err := db.Begin()
    if err != nil {
        return err
    }
    defer tx.Rollback()
    if _, err := tx.Exec(debit, cents, from); err != nil {
        return err
    }
    if _, err := tx.Exec(credit, cents, to); err != nil {
        return err
    }
    return tx.Commit()
}
''')
TRANSFER = TRANSFER_BASE.replace(
    'import "database/sql"', 'import (\n\t"database/sql"\n\t"log"\n)'
).replace(tabs('''    return tx.Commit()
}
'''), tabs('''    if err := tx.Commit(); err != nil {
        log.Printf("transfer %d -> %d: commit: %v", from, to, err)
    }
    return nil
}
'''))

PROJECTS_BASE = tabs('''package api

import "net/http"

func (s *Server) DeleteProject(w http.ResponseWriter, r *http.Request) {
    user := s.currentUser(r)
    project, err := s.store.Project(r.PathValue("id"))
    if err != nil {
        http.Error(w, "not found", http.StatusNotFound)
        return
    }
    if !user.CanManage(project) {
        http.Error(w, "forbidden", http.StatusForbidden)
        return
    }
    if err := s.store.DeleteProject(project.ID); err != nil {
        http.Error(w, err.Error(), http.StatusInternalServerError)
        return
    }
    w.WriteHeader(http.StatusNoContent)
}
''')
PROJECTS = PROJECTS_BASE.replace("DeleteProject(w", "ArchiveProject(w").replace(
    tabs("    user := s.currentUser(r)\n"), ""
).replace(tabs('''    if !user.CanManage(project) {
        http.Error(w, "forbidden", http.StatusForbidden)
        return
    }
    if err := s.store.DeleteProject(project.ID); err != nil {'''),
    tabs("    if err := s.store.ArchiveProject(project.ID); err != nil {"))

RETRY_BASE = tabs('''package retry

import "time"

func backoff(attempt int) time.Duration {
    return time.Duration(1<<attempt) * 100 * time.Millisecond
}

func Do(attempts int, f func() error) error {
    var err error
    for i := 0; i < attempts; i++ {
        if err = f(); err == nil {
            return nil
        }
        time.Sleep(backoff(i))
    }
    return err
}
''')

SPLIT = tabs('''package text

import "strings"

// Fields splits s on commas and trims the spaces around each field.
func Fields(s string) []string {
    parts := strings.Split(s, ",")
    for i, p := range parts {
        parts[i] = strings.TrimSpace(p)
    }
    return parts
}
''')
SPLIT_TEST = tabs('''package text

import (
    "reflect"
    "testing"
)

func TestFields(t *testing.T) {
    cases := []struct {
        in   string
        want []string
    }{
        {"a,b", []string{"a", "b"}},
        {" a , b ", []string{"a", "b"}},
        {"a", []string{"a"}},
        {"", []string{""}},
    }
    for _, c := range cases {
        if got := Fields(c.in); !reflect.DeepEqual(got, c.want) {
            t.Errorf("Fields(%q) = %q, want %q", c.in, got, c.want)
        }
    }
}
''')

GO_MOD = '''module example.com/shop

go 1.22

require (
\tgithub.com/go-chi/chi/v5 v5.0.10
\tgithub.com/jackc/pgx/v5 v5.5.0
)
'''

GO: tuple[Case, ...] = (
    Case("go-response-body-not-closed", "go", "defect",
         {"health/client.go": STATUS_BASE}, {"health/client.go": STATUS},
         (Defect("health/client.go", line_of(STATUS, "resp, err := Client.Get(url)"), "bug",
                 "the response body is never closed: connections leak",
                 ("close", "leak", "body", "defer")),), "Check a URL's status"),
    Case("go-sql-sprintf", "go", "defect",
         {"store/users.go": USERS_BASE}, {"store/users.go": USERS},
         (Defect("store/users.go", line_of(USERS, "fmt.Sprintf(\"SELECT"), "security",
                 "SQL built from the name", ("sql", "inject", "placeholder", "parameter",
                                             "escap", "sanitiz", "interpolat")),),
         "Find users by name"),
    Case("go-port-check-never-true", "go", "defect",
         {"config/server.go": CONFIG_BASE}, {"config/server.go": CONFIG},
         (Defect("config/server.go", line_of(CONFIG, "s.Port < 1 && s.Port > 65535"), "bug",
                 "the range check can never be true", ("never", "&&", "||", "always false",
                                                       "impossible", "both", "logic")),),
         "Validate server settings"),
    Case("go-map-written-concurrently", "go", "defect",
         {"cache/cache.go": CACHE_BASE}, {"cache/cache.go": CACHE},
         (Defect("cache/cache.go", line_of(CACHE, "c.items[k] = load(k)"), "bug",
                 "goroutines write the map at once", ("race", "concurren", "mutex", "lock",
                                                      "sync.map", "synchroni", "thread")),),
         "Warm the cache in parallel"),
    Case("go-commit-error-swallowed", "go", "defect",
         {"bank/transfer.go": TRANSFER_BASE}, {"bank/transfer.go": TRANSFER},
         (Defect("bank/transfer.go", line_of(TRANSFER, "if err := tx.Commit()"), "bug",
                 "a failed commit is reported as success",
                 ("swallow", "ignor", "nil", "success", "fail", "propagat", "return"),
                 end_line=line_of(TRANSFER, "return nil")),),
         "Log failed transfer commits"),
    Case("go-authorization-check-removed", "go", "defect",
         {"api/projects.go": PROJECTS_BASE}, {"api/projects.go": PROJECTS},
         (Defect("api/projects.go", line_of(PROJECTS, "s.store.Project("), "security",
                 "anyone can archive any project", ("auth", "permission", "canmanage",
                                                    "forbidden", "access", "anyone", "check"),
                 end_line=line_of(PROJECTS, "s.store.ArchiveProject")),),
         "Archive projects instead of deleting them"),
    Case("go-clean-rename", "go", "clean",
         {"retry/retry.go": RETRY_BASE},
         {"retry/retry.go": RETRY_BASE.replace("backoff", "delayFor")},
         message="Name the backoff by what it returns"),
    Case("go-clean-table-test", "go", "clean",
         {"text/fields.go": SPLIT}, {"text/fields_test.go": SPLIT_TEST}, message="Test Fields"),
    Case("go-clean-module-bump", "go", "clean",
         {"go.mod": GO_MOD},
         {"go.mod": GO_MOD.replace("v5.0.10", "v5.1.0").replace("v5.5.0", "v5.7.1")},
         message="Bump chi and pgx"),
)
