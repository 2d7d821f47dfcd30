<?php

declare(strict_types=1);

namespace Demo;

use Demo\Container\Container;
use Demo\Container\ServiceProviderInterface;
use Demo\Controller\ApiController;
use Demo\Controller\ArticleController;
use Demo\Controller\ContactController;
use Demo\Controller\ErrorController;
use Demo\Controller\RemoteController;
use Demo\Domain\ArticleRepositoryInterface;
use Demo\Domain\Catalogue;
use Demo\Domain\SeededArticleRepository;
use Demo\Http\MiddlewarePipeline;
use Demo\Middleware\ErrorMiddleware;
use Demo\Middleware\ETagMiddleware;
use Demo\Middleware\SecurityHeadersMiddleware;
use Demo\Middleware\TimingMiddleware;
use Demo\Presentation\ArticlePresenter;
use Demo\Presentation\ArticleSerializer;
use Demo\Remote\RemoteService;
use Demo\Remote\RemoteServiceInterface;
use Demo\Routing\Router;
use Demo\Routing\RoutingHandler;
use Demo\Text\MarkdownRenderer;
use Demo\Text\ReadingTime;
use Demo\Text\Slugger;
use Demo\Text\TextGenerator;
use Demo\View\Engine;
use Demo\View\Escaper;
use Demo\View\RendererInterface;

final class AppServiceProvider implements ServiceProviderInterface
{
    public function register(Container $c): void
    {
        $c->set(Router::class, static function (): Router {
            $router = new Router();
            Routes::define($router);

            return $router;
        });

        $c->set(Catalogue::class, static fn (Container $c): Catalogue => Catalogue::fromFile($c->string('root_dir') . '/data/catalogue.json'));
        $c->set(Slugger::class, static fn (): Slugger => new Slugger());
        $c->set(TextGenerator::class, static function (Container $c): TextGenerator {
            $catalogue = $c->get(Catalogue::class);

            return new TextGenerator($catalogue, $catalogue->articleCount);
        });
        $c->set(ArticleRepositoryInterface::class, static fn (Container $c): ArticleRepositoryInterface => new SeededArticleRepository(
            $c->get(Catalogue::class),
            $c->get(TextGenerator::class),
            $c->get(Slugger::class),
        ));
        $c->set(MarkdownRenderer::class, static fn (Container $c): MarkdownRenderer => new MarkdownRenderer($c->get(Slugger::class)));
        $c->set(ReadingTime::class, static fn (): ReadingTime => new ReadingTime(220));
        $c->set(ArticlePresenter::class, static fn (Container $c): ArticlePresenter => new ArticlePresenter(
            $c->get(ArticleRepositoryInterface::class),
            $c->get(MarkdownRenderer::class),
            $c->get(ReadingTime::class),
        ));
        $c->set(ArticleSerializer::class, static fn (Container $c): ArticleSerializer => new ArticleSerializer($c->get(Router::class)));
        $c->set(RemoteServiceInterface::class, static fn (): RemoteServiceInterface => new RemoteService(5000));

        $c->set(RendererInterface::class, static fn (Container $c): RendererInterface => new Engine(
            $c->string('root_dir') . '/templates',
            new Escaper(),
            $c->get(Router::class),
            [
                'appName' => 'phptune demo',
                'navigation' => [
                    'articles' => ['route' => 'articles', 'label' => 'Articles'],
                    'remote' => ['route' => 'remote', 'label' => 'Status'],
                    'contact' => ['route' => 'contact', 'label' => 'Contact'],
                ],
            ],
        ));

        $c->set(ArticleController::class, static fn (Container $c): ArticleController => new ArticleController(
            $c->get(RendererInterface::class),
            $c->get(ArticleRepositoryInterface::class),
            $c->get(ArticlePresenter::class),
        ));
        $c->set(ApiController::class, static fn (Container $c): ApiController => new ApiController(
            $c->get(RendererInterface::class),
            $c->get(ArticleRepositoryInterface::class),
            $c->get(ArticlePresenter::class),
            $c->get(ArticleSerializer::class),
            $c->get(Router::class),
        ));
        $c->set(ContactController::class, static fn (Container $c): ContactController => new ContactController($c->get(RendererInterface::class)));
        $c->set(RemoteController::class, static fn (Container $c): RemoteController => new RemoteController(
            $c->get(RendererInterface::class),
            $c->get(RemoteServiceInterface::class),
        ));
        $c->set(ErrorController::class, static fn (Container $c): ErrorController => new ErrorController($c->get(RendererInterface::class)));

        $c->set(MiddlewarePipeline::class, static fn (Container $c): MiddlewarePipeline => new MiddlewarePipeline(
            [
                new TimingMiddleware(),
                new SecurityHeadersMiddleware(),
                new ErrorMiddleware($c->get(ErrorController::class)),
                new ETagMiddleware(),
            ],
            new RoutingHandler($c->get(Router::class), $c),
        ));
    }
}
