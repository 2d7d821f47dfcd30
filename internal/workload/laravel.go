package workload

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func laravelPreset() *Preset {
	return &Preset{
		Name: "laravel",
		Summary: "a Laravel 8 hello-world on Debian's php-laravel-framework: the real kernel, router, " +
			"web middleware (cookies, session, CSRF), Blade templates and a signed-in dashboard",
		Packages: []string{"php-laravel-framework", "php8.2-mbstring", "php8.2-xml"},
		Front:    "index.php",
		Revision: 2,
		Writable: []string{"storage", "bootstrap/cache"},
		URLs: []URL{
			{Path: "/hello/phptune", Weight: 3, Marker: `phptune-laravel:hello[\s\S]*Item 20 for phptune`},
			{Path: "/", Weight: 1, Marker: `phptune-laravel:home`},
			// A signed-in user's page: the session read on every request, the user's own list.
			{Path: "/dashboard", Weight: 1, Marker: `phptune-laravel:dashboard[\s\S]*Signed in as admin`, Session: true},
		},
		Login: &Login{Path: "/login", Form: map[string]string{"name": "admin"}, ExpectCookie: "phptune_signed_in",
			PasswordFile: "admin-password", PasswordField: "password"},
		provision: provisionLaravel,
	}
}

func provisionLaravel(ctx context.Context, p *Prep) error {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	// The admin's password: its hash in the app's config, the password itself beside the workload, readable by
	// us only, for the login before a run.
	admin := randomHex(12)
	hash, err := bcryptHash(ctx, admin)
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(p.Dir, p.Preset.Login.PasswordFile), []byte(admin), 0o600); err != nil {
		return err
	}
	files := map[string]string{
		"index.php": `<?php
// Front controller of a Laravel 8 app on Debian's packaged framework (include_path has /usr/share/php).
define('LARAVEL_START', microtime(true));
require_once 'Illuminate/autoload.php';
spl_autoload_register(function ($class) {
    if (strncmp($class, 'App\\', 4) === 0) {
        $file = __DIR__ . '/app/' . str_replace('\\', '/', substr($class, 4)) . '.php';
        if (is_file($file)) {
            require $file;
        }
    }
});
$app = require __DIR__ . '/bootstrap/app.php';
$kernel = $app->make(Illuminate\Contracts\Http\Kernel::class);
$response = $kernel->handle($request = Illuminate\Http\Request::capture())->send();
$kernel->terminate($request, $response);
`,
		"bootstrap/app.php": `<?php
$app = new Illuminate\Foundation\Application(dirname(__DIR__));
$app->singleton(Illuminate\Contracts\Http\Kernel::class, App\Http\Kernel::class);
$app->singleton(Illuminate\Contracts\Console\Kernel::class, Illuminate\Foundation\Console\Kernel::class);
$app->singleton(Illuminate\Contracts\Debug\ExceptionHandler::class, App\Exceptions\Handler::class);
return $app;
`,
		"app/Http/Kernel.php": `<?php
namespace App\Http;

use Illuminate\Foundation\Http\Kernel as HttpKernel;

class Kernel extends HttpKernel
{
    protected $middleware = [
        \Illuminate\Foundation\Http\Middleware\ValidatePostSize::class,
        \Illuminate\Foundation\Http\Middleware\TrimStrings::class,
        \Illuminate\Foundation\Http\Middleware\ConvertEmptyStringsToNull::class,
    ];

    protected $middlewareGroups = [
        'web' => [
            \Illuminate\Cookie\Middleware\EncryptCookies::class,
            \Illuminate\Cookie\Middleware\AddQueuedCookiesToResponse::class,
            \Illuminate\Session\Middleware\StartSession::class,
            \Illuminate\View\Middleware\ShareErrorsFromSession::class,
            \App\Http\Middleware\VerifyCsrfToken::class,
            \Illuminate\Routing\Middleware\SubstituteBindings::class,
        ],
    ];
}
`,
		// The login form is posted by phptune once before a run, without a page to take a token from.
		"app/Http/Middleware/VerifyCsrfToken.php": `<?php
namespace App\Http\Middleware;

class VerifyCsrfToken extends \Illuminate\Foundation\Http\Middleware\VerifyCsrfToken
{
    protected $except = ['login'];
}
`,
		"app/Exceptions/Handler.php": `<?php
namespace App\Exceptions;

class Handler extends \Illuminate\Foundation\Exceptions\Handler
{
}
`,
		"app/Providers/RouteServiceProvider.php": `<?php
namespace App\Providers;

use Illuminate\Foundation\Support\Providers\RouteServiceProvider as ServiceProvider;
use Illuminate\Support\Facades\Route;

class RouteServiceProvider extends ServiceProvider
{
    public function boot()
    {
        $this->routes(function () {
            Route::middleware('web')->group(base_path('routes/web.php'));
        });
    }
}
`,
		"app/Http/Controllers/HelloController.php": `<?php
namespace App\Http\Controllers;

use Illuminate\Http\Request;
use Illuminate\Routing\Controller;

class HelloController extends Controller
{
    public function show(Request $request, string $name)
    {
        $items = [];
        for ($i = 1; $i <= 20; $i++) {
            $items[] = ['id' => $i, 'title' => "Item $i for $name", 'done' => $i % 3 === 0];
        }
        return view('hello', ['name' => $name, 'items' => $items, 'agent' => $request->userAgent()]);
    }
}
`,
		"routes/web.php": `<?php
use App\Http\Controllers\HelloController;
use Illuminate\Http\Request;
use Illuminate\Support\Facades\Route;

Route::get('/', function () {
    return view('home');
})->name('home');
Route::get('/hello/{name}', [HelloController::class, 'show'])->where('name', '[a-z0-9-]+')->name('hello');
Route::post('/login', function (Request $request) {
    if ($request->input('name') !== 'admin' || !password_verify((string) $request->input('password'), config('app.admin_hash'))) {
        return redirect('/');
    }
    $request->session()->regenerate();
    $request->session()->put('user', 'admin');
    return redirect('/dashboard')->withCookie(cookie('phptune_signed_in', '1', 120));
});
Route::get('/dashboard', function (Request $request) {
    $user = $request->session()->get('user');
    if ($user === null) {
        return redirect('/');
    }
    $tasks = [];
    for ($i = 1; $i <= 15; $i++) {
        $tasks[] = ['id' => $i, 'title' => "Task $i of $user", 'due' => date('Y-m-d', 86400 * (19000 + $i))];
    }
    return view('dashboard', ['user' => $user, 'tasks' => $tasks]);
})->name('dashboard');
`,
		"resources/views/layout.blade.php": `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>@yield('title') - {{ config('app.name') }}</title></head>
<body>
<header><a href="{{ route('home') }}">{{ config('app.name') }}</a></header>
<main>@yield('content')</main>
@include('footer')
</body>
</html>
`,
		"resources/views/footer.blade.php": `<footer>Served by Laravel {{ app()->version() }} on PHP {{ PHP_VERSION }}</footer>
`,
		"resources/views/home.blade.php": `@extends('layout')
@section('title', 'Home')
@section('content')
<h1>phptune-laravel:home</h1>
<p><a href="{{ route('hello', ['name' => 'phptune']) }}">Say hello</a></p>
@endsection
`,
		"resources/views/hello.blade.php": `@extends('layout')
@section('title', 'Hello')
@section('content')
<h1>Hello, {{ $name }}!</h1>
<p class="marker">phptune-laravel:hello</p>
<ul>
@foreach ($items as $item)
    <li class="{{ $item['done'] ? 'done' : 'open' }}">#{{ $item['id'] }} {{ $item['title'] }}</li>
@endforeach
</ul>
<form method="post" action="/hello/{{ $name }}">@csrf<button>Post</button></form>
@endsection
`,
		"resources/views/dashboard.blade.php": `@extends('layout')
@section('title', 'Dashboard')
@section('content')
<h1>phptune-laravel:dashboard</h1>
<p>Signed in as {{ $user }}</p>
<table>
@foreach ($tasks as $task)
    <tr><td>#{{ $task['id'] }}</td><td>{{ $task['title'] }}</td><td>{{ $task['due'] }}</td></tr>
@endforeach
</table>
@endsection
`,
		"config/app.php": `<?php
return [
    'name' => 'phptune Laravel',
    'env' => 'production',
    'debug' => false,
    'url' => 'http://localhost',
    'timezone' => 'UTC',
    'locale' => 'en',
    'fallback_locale' => 'en',
    'key' => 'base64:` + base64.StdEncoding.EncodeToString(key) + `',
    'cipher' => 'AES-256-CBC',
    'admin_hash' => '` + hash + `',
    'providers' => [
        Illuminate\Cookie\CookieServiceProvider::class,
        Illuminate\Encryption\EncryptionServiceProvider::class,
        Illuminate\Filesystem\FilesystemServiceProvider::class,
        Illuminate\Foundation\Providers\FoundationServiceProvider::class,
        Illuminate\Session\SessionServiceProvider::class,
        Illuminate\Translation\TranslationServiceProvider::class,
        Illuminate\Validation\ValidationServiceProvider::class,
        Illuminate\View\ViewServiceProvider::class,
        App\Providers\RouteServiceProvider::class,
    ],
    'aliases' => [
        'App' => Illuminate\Support\Facades\App::class,
        'Config' => Illuminate\Support\Facades\Config::class,
        'Route' => Illuminate\Support\Facades\Route::class,
        'Session' => Illuminate\Support\Facades\Session::class,
        'View' => Illuminate\Support\Facades\View::class,
    ],
];
`,
		"config/view.php": `<?php
return [
    'paths' => [resource_path('views')],
    'compiled' => storage_path('framework/views'),
];
`,
		// Cookie sessions: the session costs what it costs in a real app, and no file piles up per request.
		"config/session.php": `<?php
return [
    'driver' => 'cookie',
    'lifetime' => 120,
    'expire_on_close' => false,
    'encrypt' => false,
    'files' => storage_path('framework/sessions'),
    'lottery' => [2, 100],
    'cookie' => 'phptune_session',
    'path' => '/',
    'domain' => null,
    'secure' => false,
    'http_only' => true,
    'same_site' => 'lax',
];
`,
		"config/logging.php": `<?php
return [
    'default' => 'single',
    'channels' => [
        'single' => ['driver' => 'single', 'path' => storage_path('logs/laravel.log'), 'level' => 'warning'],
    ],
];
`,
		"storage/framework/views/.keep":    "",
		"storage/framework/sessions/.keep": "",
		"storage/framework/cache/.keep":    "",
		"storage/logs/.keep":               "",
		"bootstrap/cache/.keep":            "",
	}
	for name, text := range files {
		if err := writeFile(filepath.Join(p.Docroot(), filepath.FromSlash(name)), []byte(text), 0o644); err != nil {
			return err
		}
	}
	return verifyFramework(ctx, p, "/hello/phptune", `phptune-laravel:hello`)
}

// verifyFramework requests uri from the provisioned app once with php-cli (in a scratch copy, so no compiled
// template of root's is left in the docroot) and checks the marker and the number of PHP files included.
func verifyFramework(ctx context.Context, p *Prep, uri, marker string) error {
	n, err := IncludedFiles(ctx, p.Docroot(), p.Preset.Front, uri, marker)
	if err != nil {
		return fmt.Errorf("check the app with php-cli: %w", err)
	}
	fmt.Fprintf(p.Log, "checked %s with php-cli: the page is right, %d PHP files included\n", uri, n)
	return nil
}

// bcryptHash is PHP's own password_hash of pw (php-cli, which provisioning needs anyway), which the app checks
// with password_verify. The password reaches php in a script file only we can read, never in argv.
func bcryptHash(ctx context.Context, pw string) (string, error) {
	out, err := php(ctx, os.TempDir(), nil, "<?php echo password_hash("+phpString(pw)+", PASSWORD_BCRYPT);")
	if err != nil {
		return "", err
	}
	h := strings.TrimSpace(string(out))
	if !strings.HasPrefix(h, "$2y$") {
		return "", fmt.Errorf("password_hash gave %q", lastLines(h, 1))
	}
	return h, nil
}
