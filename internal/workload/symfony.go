package workload

import (
	"context"
	"path/filepath"
)

func symfonyPreset() *Preset {
	return &Preset{
		Name: "symfony",
		Summary: "a Symfony 5.4 hello-world on Debian's php-symfony: the real kernel (MicroKernelTrait), " +
			"FrameworkBundle's router and container, a Twig template",
		Packages: []string{"php-symfony", "php8.2-mbstring", "php8.2-xml", "php8.2-intl"},
		Front:    "index.php",
		Revision: 1,
		Writable: []string{"var"},
		URLs: []URL{
			{Path: "/hello/phptune", Weight: 3, Marker: `phptune-symfony:hello[\s\S]*Item 20 for phptune`},
			{Path: "/", Weight: 1, Marker: `phptune-symfony:home`},
		},
		provision: provisionSymfony,
	}
}

func provisionSymfony(ctx context.Context, p *Prep) error {
	files := map[string]string{
		"index.php": `<?php
// Front controller of a Symfony 5.4 app on Debian's packaged components (include_path has /usr/share/php).
require_once 'Symfony/Bundle/FrameworkBundle/autoload.php';
require_once 'Symfony/Bundle/TwigBundle/autoload.php';
spl_autoload_register(function ($class) {
    if (strncmp($class, 'App\\', 4) === 0) {
        $file = __DIR__ . '/src/' . str_replace('\\', '/', substr($class, 4)) . '.php';
        if (is_file($file)) {
            require $file;
        }
    }
});

use App\Kernel;
use Symfony\Component\HttpFoundation\Request;

$kernel = new Kernel('prod', false);
$request = Request::createFromGlobals();
$response = $kernel->handle($request);
$response->send();
$kernel->terminate($request, $response);
`,
		"src/Kernel.php": `<?php
namespace App;

use App\Controller\HelloController;
use Symfony\Bundle\FrameworkBundle\Kernel\MicroKernelTrait;
use Symfony\Component\DependencyInjection\Loader\Configurator\ContainerConfigurator;
use Symfony\Component\HttpKernel\Kernel as BaseKernel;
use Symfony\Component\Routing\Loader\Configurator\RoutingConfigurator;

class Kernel extends BaseKernel
{
    use MicroKernelTrait;

    public function registerBundles(): iterable
    {
        return [
            new \Symfony\Bundle\FrameworkBundle\FrameworkBundle(),
            new \Symfony\Bundle\TwigBundle\TwigBundle(),
        ];
    }

    public function getProjectDir(): string
    {
        return \dirname(__DIR__);
    }

    protected function configureContainer(ContainerConfigurator $c): void
    {
        $c->extension('framework', [
            'secret' => 'phptune-not-secret',
            'http_method_override' => false,
            'router' => ['utf8' => true],
            'php_errors' => ['log' => true],
        ]);
        $c->extension('twig', ['default_path' => '%kernel.project_dir%/templates']);
        $c->services()
            ->set(HelloController::class)
            ->autowire()->autoconfigure()->public()
            ->tag('controller.service_arguments');
    }

    protected function configureRoutes(RoutingConfigurator $routes): void
    {
        $routes->add('home', '/')->controller([HelloController::class, 'home']);
        $routes->add('hello', '/hello/{name}')->controller([HelloController::class, 'show'])
            ->requirements(['name' => '[a-z0-9-]+']);
    }
}
`,
		"src/Controller/HelloController.php": `<?php
namespace App\Controller;

use Symfony\Bundle\FrameworkBundle\Controller\AbstractController;
use Symfony\Component\HttpFoundation\Request;
use Symfony\Component\HttpFoundation\Response;

class HelloController extends AbstractController
{
    public function home(): Response
    {
        return $this->render('home.html.twig');
    }

    public function show(Request $request, string $name): Response
    {
        $items = [];
        for ($i = 1; $i <= 20; $i++) {
            $items[] = ['id' => $i, 'title' => "Item $i for $name", 'done' => $i % 3 === 0];
        }
        return $this->render('hello.html.twig', ['name' => $name, 'items' => $items, 'agent' => $request->headers->get('User-Agent')]);
    }
}
`,
		"templates/base.html.twig": `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>{% block title %}{% endblock %} - phptune Symfony</title></head>
<body>
<header><a href="{{ path('home') }}">phptune Symfony</a></header>
<main>{% block body %}{% endblock %}</main>
{% include 'footer.html.twig' %}
</body>
</html>
`,
		"templates/footer.html.twig": `<footer>Served by Symfony {{ constant('Symfony\\Component\\HttpKernel\\Kernel::VERSION') }}</footer>
`,
		"templates/home.html.twig": `{% extends 'base.html.twig' %}
{% block title %}Home{% endblock %}
{% block body %}
<h1>phptune-symfony:home</h1>
<p><a href="{{ path('hello', {name: 'phptune'}) }}">Say hello</a></p>
{% endblock %}
`,
		"templates/hello.html.twig": `{% extends 'base.html.twig' %}
{% block title %}Hello{% endblock %}
{% block body %}
<h1>Hello, {{ name }}!</h1>
<p class="marker">phptune-symfony:hello</p>
<ul>
{% for item in items %}
    <li class="{{ item.done ? 'done' : 'open' }}">#{{ item.id }} {{ item.title }}</li>
{% endfor %}
</ul>
{% endblock %}
`,
		"var/cache/.keep": "",
		"var/log/.keep":   "",
	}
	for name, text := range files {
		if err := writeFile(filepath.Join(p.Docroot(), filepath.FromSlash(name)), []byte(text), 0o644); err != nil {
			return err
		}
	}
	// The container is compiled by the first request of each served copy (it holds absolute paths).
	return verifyFramework(ctx, p, "/hello/phptune", `phptune-symfony:hello`)
}
