<?php

declare(strict_types=1);

namespace Demo\Controller;

use Demo\Domain\ArticleCriteria;
use Demo\Domain\ArticleRepositoryInterface;
use Demo\Domain\ArticleSort;
use Demo\Http\NotFoundException;
use Demo\Http\Request;
use Demo\Http\Response;
use Demo\Presentation\ArticlePresenter;
use Demo\Presentation\ArticleSerializer;
use Demo\Routing\UrlGeneratorInterface;
use Demo\Support\Paginator;
use Demo\View\RendererInterface;

final class ApiController extends AbstractController
{
    public const MARKER = 'phptune-demo:api';
    private const PER_PAGE = 10;

    public function __construct(
        RendererInterface $view,
        private readonly ArticleRepositoryInterface $articles,
        private readonly ArticlePresenter $presenter,
        private readonly ArticleSerializer $serializer,
        private readonly UrlGeneratorInterface $urls,
    ) {
        parent::__construct($view);
    }

    public function index(Request $request): Response
    {
        $tag = $request->query('tag');
        $tag = $tag === '' ? null : $tag;
        $sort = ArticleSort::fromQuery($request->query('sort'));
        $perPage = $request->queryInt('per_page', self::PER_PAGE, 1, 50);

        $matching = $this->articles->matching(new ArticleCriteria($tag, null, $sort));
        $paginator = new Paginator(count($matching), $perPage, $request->queryInt('page', 1, 1, 1_000_000));

        $query = ['tag' => $tag, 'sort' => $sort->value, 'per_page' => $perPage === self::PER_PAGE ? null : $perPage];
        $links = ['self' => $this->urls->generate('api_articles', [], $query + ['page' => $paginator->page])];
        if ($paginator->hasPrevious()) {
            $links['prev'] = $this->urls->generate('api_articles', [], $query + ['page' => $paginator->page - 1]);
        }
        if ($paginator->hasNext()) {
            $links['next'] = $this->urls->generate('api_articles', [], $query + ['page' => $paginator->page + 1]);
        }

        $items = array_map($this->serializer->summary(...), $this->presenter->summaries($paginator->slice($matching)));

        return $this->json([
            'marker' => self::MARKER,
            'meta' => [
                'page' => $paginator->page,
                'pages' => $paginator->pages,
                'per_page' => $perPage,
                'total' => $paginator->total,
                'sort' => $sort->value,
                'tag' => $tag,
            ],
            'links' => $links,
            'items' => $items,
        ])->withHeader('Cache-Control', 'public, max-age=60');
    }

    public function show(Request $request): Response
    {
        $id = (int) $request->attribute('id', '0');
        $article = $this->articles->find($id) ?? throw new NotFoundException(sprintf('No article %d.', $id));

        return $this->json([
            'marker' => self::MARKER,
            'article' => $this->serializer->detail($this->presenter->detail($article)),
        ])->withHeader('Cache-Control', 'public, max-age=300');
    }
}
