package workload

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

func wordpressPreset() *Preset {
	return &Preset{
		Name:    "wordpress",
		Summary: "WordPress with a private MariaDB: 24 posts with comments, pages, categories (theme Twenty Twenty-Three)",
		// nginx is in place before this (install-deps), so apt does not pull in apache2 for wordpress's httpd.
		Packages: []string{"wordpress", "wordpress-theme-twentytwentythree", "mariadb-server", "php8.2-mysql"},
		Services: []string{"mariadb"},
		Front:    "index.php",
		Revision: 2, // 2: an admin password kept for the logged-in page
		Writable: []string{"wp-content/uploads"},
		URLs: []URL{
			// The home page: the category list and the latest post's title.
			{Path: "/", Weight: 3, Marker: `Tuning note 24: [\s\S]*wp-block-categories-list`},
			{Path: "/?name=tuning-note-7", Weight: 3, Marker: `Tuning note 7: PGO builds[\s\S]*Reader 7-3`},
			{Path: "/?s=huge+pages", Weight: 1, Marker: `Tuning note 11: huge pages`},
			// An editor's dashboard: WordPress with a logged-in user (no page cache applies, the admin runs).
			{Path: "/wp-admin/index.php", Weight: 1, Marker: `<title>Dashboard[\s\S]*At a Glance`, Session: true},
		},
		Login: &Login{Path: "/wp-login.php", Form: map[string]string{"log": "admin", "testcookie": "1"},
			Cookies: map[string]string{"wordpress_test_cookie": "WP Cookie check"}, ExpectCookie: "wordpress_logged_in_",
			PasswordFile: "admin-password", PasswordField: "pwd"},
		provision: provisionWordPress,
		start:     startWordPress,
	}
}

// randomHex makes passwords and salts: the private database's, kept in the workload dir only.
func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b)
}

func provisionWordPress(ctx context.Context, p *Prep) (err error) {
	doc := p.Docroot()
	fmt.Fprintf(p.Log, "copying WordPress from /usr/share/wordpress\n")
	// Debian's wp-config.php reads /etc/wordpress/config-HOST.php: the copy gets its own.
	if err := copyTree("/usr/share/wordpress", doc, map[string]bool{"wp-config.php": true, ".htaccess": true, "readme.html": true}); err != nil {
		return fmt.Errorf("copy /usr/share/wordpress: %w", err)
	}
	if _, err := os.Stat(filepath.Join(doc, "wp-content", "themes", "twentytwentythree", "theme.json")); err != nil {
		return fmt.Errorf("theme Twenty Twenty-Three is missing (apt-get install wordpress-theme-twentytwentythree): without it the page is blank")
	}
	sockDir := dbSockDir(p.Final)
	password := randomHex(16)
	var salts strings.Builder
	for _, k := range []string{"AUTH_KEY", "SECURE_AUTH_KEY", "LOGGED_IN_KEY", "NONCE_KEY", "AUTH_SALT", "SECURE_AUTH_SALT", "LOGGED_IN_SALT", "NONCE_SALT"} {
		fmt.Fprintf(&salts, "define('%s', '%s');\n", k, randomHex(24))
	}
	config := `<?php
// written by phptune workload prepare: a private MariaDB on a unix socket, no /etc/wordpress.
define('DB_NAME', 'wordpress');
define('DB_USER', 'wordpress');
define('DB_PASSWORD', '` + password + `');
define('DB_HOST', 'localhost:` + filepath.Join(sockDir, "mysqld.sock") + `');
define('DB_CHARSET', 'utf8mb4');
define('DB_COLLATE', '');
` + salts.String() + `$table_prefix = 'wp_';
// The site follows the port it is served on, or WordPress redirects to the one it was installed on.
$phptune_host = $_SERVER['HTTP_HOST'] ?? 'localhost';
define('WP_HOME', 'http://' . $phptune_host);
define('WP_SITEURL', 'http://' . $phptune_host);
// Cookie names would follow the site URL, and so the port: a session made on one run's server must hold on the next.
define('COOKIEHASH', md5('phptune'));
// Nothing runs behind the measurements' back: no WP-Cron, no update checks, no outside requests.
define('DISABLE_WP_CRON', true);
define('AUTOMATIC_UPDATER_DISABLED', true);
define('WP_AUTO_UPDATE_CORE', false);
define('WP_HTTP_BLOCK_EXTERNAL', true);
define('WP_DEBUG', false);
if (!defined('ABSPATH')) define('ABSPATH', __DIR__ . '/');
require_once ABSPATH . 'wp-settings.php';
`
	if err := writeFile(filepath.Join(doc, "wp-config.php"), []byte(config), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(p.Log, "creating a private MariaDB in %s\n", filepath.Join(p.Final, "mysql"))
	dataDir := filepath.Join(p.Dir, "mysql")
	if err := initMariaDB(ctx, dataDir); err != nil {
		return err
	}
	db, err := startMariaDB(ctx, dataDir, sockDir, filepath.Join(p.Dir, "mariadb.log"))
	if err != nil {
		return err
	}
	defer func() {
		if serr := db.Stop(context.Background()); serr != nil && err == nil {
			err = fmt.Errorf("stop the private MariaDB: %w", serr)
		}
	}()
	if err := db.SQL(ctx, "CREATE DATABASE wordpress CHARACTER SET utf8mb4; CREATE USER 'wordpress'@'localhost' IDENTIFIED BY '"+
		password+"'; GRANT ALL ON wordpress.* TO 'wordpress'@'localhost';"); err != nil {
		return fmt.Errorf("create the database: %w", err)
	}
	fmt.Fprintf(p.Log, "installing the site and its content with WordPress's own API (php-cli)\n")
	// The admin's password, for the logged-in page's login: kept beside the database's, readable by us only.
	admin := randomHex(16)
	if err := writeFile(filepath.Join(p.Dir, p.Preset.Login.PasswordFile), []byte(admin), 0o600); err != nil {
		return err
	}
	out, err := php(ctx, doc, nil, wpInstallScript(doc, admin))
	if err != nil {
		return fmt.Errorf("install the site: %w", err)
	}
	if !strings.Contains(string(out), "phptune-wp-installed") {
		return fmt.Errorf("install the site: the installer did not finish: %s", lastLines(string(out), 5))
	}
	return nil
}

// wpInstallScript installs WordPress as wp-admin/install.php does, then seeds posts, comments, pages, categories
// and a home template that lists the categories.
func wpInstallScript(doc, adminPassword string) string {
	var topicsPHP strings.Builder
	topicsPHP.WriteString("[")
	for i, t := range topics {
		if i > 0 {
			topicsPHP.WriteString(", ")
		}
		topicsPHP.WriteString(phpString(t))
	}
	topicsPHP.WriteString("]")
	return `<?php
define('WP_INSTALLING', true);
$_SERVER['HTTP_HOST'] = 'localhost';
$_SERVER['REQUEST_URI'] = '/';
$_SERVER['SERVER_PROTOCOL'] = 'HTTP/1.1';
require ` + phpString(doc+"/wp-load.php") + `;
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
if (!is_blog_installed()) {
	$r = wp_install('phptune blog', 'admin', 'admin@example.invalid', false, '', ` + phpString(adminPassword) + `);
	if (is_wp_error($r)) { fwrite(STDERR, $r->get_error_message()); exit(1); }
}
update_option('posts_per_page', 10);
update_option('blogdescription', 'Notes on running PHP fast');
switch_theme('twentytwentythree');
if (get_stylesheet() !== 'twentytwentythree') { fwrite(STDERR, "theme twentytwentythree could not be activated\n"); exit(1); }
$topics = ` + topicsPHP.String() + `;
$cats = [];
foreach (['Performance', 'Operations', 'Frameworks', 'Databases', 'Releases', 'Case studies'] as $c) {
	$t = wp_insert_term($c, 'category');
	if (is_wp_error($t)) { fwrite(STDERR, $t->get_error_message()); exit(1); }
	$cats[] = $t['term_id'];
}
$now = time();
for ($i = 1; $i <= 24; $i++) {
	$topic = $topics[$i - 1];
	$body = '';
	for ($s = 1; $s <= 5; $s++) {
		$body .= "<!-- wp:heading -->\n<h2>Part $s: $topic</h2>\n<!-- /wp:heading -->\n\n";
		$body .= "<!-- wp:paragraph -->\n<p>What we measured about <strong>$topic</strong> on the staging hosts, round $s. " .
			"The effect depends on the application: a framework that includes hundreds of files gains most from a warm " .
			"cache, while an app that waits on its database gains from a larger pool. Measure first, change one thing " .
			"at a time, and compare interleaved trials.</p>\n<!-- /wp:paragraph -->\n\n";
		$body .= "<!-- wp:list -->\n<ul><li>before: 100 requests/s</li><li>after: 112 requests/s</li><li>p99: 40 ms to 31 ms</li></ul>\n<!-- /wp:list -->\n\n";
	}
	$id = wp_insert_post([
		'post_title' => "Tuning note $i: $topic",
		'post_name' => "tuning-note-$i",
		'post_content' => $body,
		'post_excerpt' => "Notes on $topic, measured.",
		'post_status' => 'publish',
		'post_author' => 1,
		'post_category' => [$cats[$i % count($cats)], $cats[($i + 2) % count($cats)]],
		'tags_input' => ['php', 'tuning', 'note-' . $i],
		'post_date' => gmdate('Y-m-d H:i:s', $now - 86400 * (30 - $i)),
	], true);
	if (is_wp_error($id)) { fwrite(STDERR, $id->get_error_message()); exit(1); }
	for ($c = 1; $c <= 4; $c++) {
		wp_insert_comment([
			'comment_post_ID' => $id,
			'comment_author' => "Reader $i-$c",
			'comment_author_email' => "reader$c@example.invalid",
			'comment_content' => "Comment $c on $topic: we saw a similar effect after changing one setting at a time.",
			'comment_approved' => 1,
			'comment_date' => gmdate('Y-m-d H:i:s', $now - 86400 * (30 - $i) + 3600 * $c),
		]);
	}
}
foreach (['About' => 'Who writes these notes and why.', 'Contact' => 'Write to the team.', 'Archive' => 'Every note, by month.'] as $title => $text) {
	wp_insert_post(['post_type' => 'page', 'post_title' => $title, 'post_content' => "<!-- wp:paragraph -->\n<p>$text</p>\n<!-- /wp:paragraph -->", 'post_status' => 'publish'], true);
}
// The home page as the site editor would save it: the theme's own, with a category list above the posts.
$home = file_get_contents(get_theme_file_path('templates/home.html'));
$home = preg_replace('/"perPage":\d+/', '"perPage":10', $home);
$home = str_replace('Mindblown: a blog about philosophy.', 'Notes on running PHP fast', $home);
$home = str_replace('<!-- wp:pattern {"slug":"twentytwentythree/cta"} /-->',
	"<!-- wp:heading -->\n<h2>Categories</h2>\n<!-- /wp:heading -->\n<!-- wp:categories {\"showPostCounts\":true} /-->", $home);
$tid = wp_insert_post(['post_type' => 'wp_template', 'post_name' => 'home', 'post_title' => 'Home', 'post_status' => 'publish',
	'post_content' => $home, 'tax_input' => ['wp_theme' => ['twentytwentythree']]], true);
if (is_wp_error($tid)) { fwrite(STDERR, $tid->get_error_message()); exit(1); }
wp_set_object_terms($tid, 'twentytwentythree', 'wp_theme');
echo "phptune-wp-installed\n";
`
}

var wpDBHost = regexp.MustCompile(`define\('DB_HOST', 'localhost:(/[^']+)/mysqld\.sock'\)`)

// startWordPress starts the workload's private MariaDB on the socket its wp-config names (read back rather
// than derived again: the directory may be named by another path now).
func startWordPress(ctx context.Context, dir string) (*Services, error) {
	config, err := os.ReadFile(filepath.Join(dir, "docroot", "wp-config.php"))
	if err != nil {
		return nil, fmt.Errorf("read wp-config.php: %w: prepare it again (phptune workload prepare wordpress)", err)
	}
	m := wpDBHost.FindSubmatch(config)
	if m == nil || !strings.HasPrefix(string(m[1]), "/tmp/phptune-db-") {
		return nil, fmt.Errorf("wp-config.php names no private MariaDB socket: prepare it again (phptune workload prepare wordpress)")
	}
	db, err := startMariaDB(ctx, filepath.Join(dir, "mysql"), string(m[1]), filepath.Join(dir, "mariadb.log"))
	if err != nil {
		return nil, err
	}
	return &Services{Names: []string{"mariadb (private, " + db.Socket() + ")"}, stops: []func(context.Context) error{db.Stop},
		exited: db.died}, nil
}
