import { RepositoryTarget } from '../access/repository-policy';
import { RepositoryRoute, TargetRepository } from '../repos/repository-assignment';
import { Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context';
import { AuthenticatedLater, Caller, Public } from '../auth/route-auth';
import { Body } from '../http/body-guard';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, pagedList, PageQuery, Paging } from '../common/paging';
import { toLabelWire } from './label.mapper';
import { CreateLabelOption, EditLabelOption } from './label.options';
import { LabelWire } from './label.wire';
import { LABEL_WRITE_REFUSED, LabelPlace, LabelsService } from './labels.service';

const SORT = ApiQuery({ name: 'sort', required: false, enum: ['alphabetically', 'reversealphabetically'], description: 'by name; alphabetically by default' });

function firstString(value: unknown): string {
  return typeof value === 'string' ? value : Array.isArray(value) && typeof value[0] === 'string' ? value[0] : '';
}

const wire = (place: LabelPlace) => (label: { id: number } & Parameters<typeof toLabelWire>[0]) => toLabelWire(label, `${place.listUrl}/${label.id}`);

@ApiTags('issue')
@Controller()
export class RepositoryLabelsController {
  constructor(private readonly labels: LabelsService) {}

  @Get('repos/:owner/:repo/labels')
  @Public('issue')
  @RepositoryRoute()
  @ApiOperation({ summary: "Get all of a repository's labels" })
  @SORT
  @ApiPaging()
  @ApiOkResponse({ type: [LabelWire], description: 'LabelList' })
  @ApiErrors(404)
  async list(@TargetRepository() target: RepositoryTarget, @Query('sort') sort: unknown, @Paging() page: PageQuery): Promise<PagedList<LabelWire>> {
    const place = this.labels.repositoryPlace(target);
    return pagedList(await this.labels.list(place, firstString(sort), page), page, wire(place));
  }

  @Post('repos/:owner/:repo/labels')
  @AuthenticatedLater('issue')
  @RepositoryRoute({ mode: 'write', writes: 'repo.issues', message: LABEL_WRITE_REFUSED, archived: 'accept' })
  @ApiOperation({ summary: 'Create a label' })
  @ApiCreatedResponse({ type: LabelWire })
  @ApiErrors(404, 409, 422)
  async create(@TargetRepository() target: RepositoryTarget, @Body() option: CreateLabelOption): Promise<LabelWire> {
    const place = this.labels.repositoryPlace(target);
    const label = await this.labels.create(place, {
      name: option.name,
      color: option.color,
      description: option.description,
      exclusive: option.exclusive,
      isArchived: option.is_archived,
    });
    return wire(place)(label);
  }

  @Get('repos/:owner/:repo/labels/:id')
  @Public('issue')
  @RepositoryRoute()
  @ApiOperation({ summary: 'Get a single label' })
  @ApiOkResponse({ type: LabelWire })
  @ApiErrors(404)
  async get(@TargetRepository() target: RepositoryTarget, @Param('id') id: string): Promise<LabelWire> {
    const place = this.labels.repositoryPlace(target);
    return wire(place)(await this.labels.get(place, id));
  }

  @Patch('repos/:owner/:repo/labels/:id')
  @AuthenticatedLater('issue')
  @RepositoryRoute({ mode: 'write', writes: 'repo.issues', message: LABEL_WRITE_REFUSED, archived: 'accept' })
  @ApiOperation({ summary: 'Update a label' })
  @ApiOkResponse({ type: LabelWire })
  @ApiErrors(404, 409, 422)
  async edit(@TargetRepository() target: RepositoryTarget, @Param('id') id: string, @Body() option: EditLabelOption): Promise<LabelWire> {
    const place = this.labels.repositoryPlace(target);
    const label = await this.labels.edit(place, id, {
      name: option.name,
      color: option.color,
      description: option.description,
      exclusive: option.exclusive,
      isArchived: option.is_archived,
    });
    return wire(place)(label);
  }

  @Delete('repos/:owner/:repo/labels/:id')
  @AuthenticatedLater('issue')
  @RepositoryRoute({ mode: 'write', writes: 'repo.issues', message: LABEL_WRITE_REFUSED, archived: 'accept' })
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a label' })
  @ApiEmpty()
  @ApiErrors(404)
  async delete(@TargetRepository() target: RepositoryTarget, @Param('id') id: string): Promise<void> {
    await this.labels.delete(this.labels.repositoryPlace(target), id);
  }
}

@ApiTags('organization')
@Controller()
export class OrganizationLabelsController {
  constructor(private readonly labels: LabelsService) {}

  @Get('orgs/:org/labels')
  @Public('organization')
  @ApiOperation({ summary: "List an organization's labels" })
  @SORT
  @ApiPaging()
  @ApiOkResponse({ type: [LabelWire], description: 'LabelList' })
  @ApiErrors(404)
  async list(@Caller() caller: AuthContext, @Param('org') org: string, @Query('sort') sort: unknown, @Paging() page: PageQuery): Promise<PagedList<LabelWire>> {
    const place = await this.labels.organizationPlace(caller, org, 'list');
    return pagedList(await this.labels.list(place, firstString(sort), page), page, wire(place));
  }

  @Post('orgs/:org/labels')
  @Public('organization')
  @ApiOperation({ summary: 'Create a label for an organization' })
  @ApiCreatedResponse({ type: LabelWire })
  @ApiErrors(404, 409, 422)
  async create(@Caller() caller: AuthContext, @Param('org') org: string, @Body() option: CreateLabelOption): Promise<LabelWire> {
    const place = await this.labels.organizationPlace(caller, org, 'write');
    const label = await this.labels.create(place, {
      name: option.name,
      color: option.color,
      description: option.description,
      exclusive: option.exclusive,
      isArchived: option.is_archived,
    });
    return wire(place)(label);
  }

  @Get('orgs/:org/labels/:id')
  @Public('organization')
  @ApiOperation({ summary: 'Get a single label' })
  @ApiOkResponse({ type: LabelWire })
  @ApiErrors(404)
  async get(@Caller() caller: AuthContext, @Param('org') org: string, @Param('id') id: string): Promise<LabelWire> {
    const place = await this.labels.organizationPlace(caller, org, 'read');
    return wire(place)(await this.labels.get(place, id));
  }

  @Patch('orgs/:org/labels/:id')
  @Public('organization')
  @ApiOperation({ summary: 'Update a label' })
  @ApiOkResponse({ type: LabelWire })
  @ApiErrors(404, 409, 422)
  async edit(@Caller() caller: AuthContext, @Param('org') org: string, @Param('id') id: string, @Body() option: EditLabelOption): Promise<LabelWire> {
    const place = await this.labels.organizationPlace(caller, org, 'write');
    const label = await this.labels.edit(place, id, {
      name: option.name,
      color: option.color,
      description: option.description,
      exclusive: option.exclusive,
      isArchived: option.is_archived,
    });
    return wire(place)(label);
  }

  @Delete('orgs/:org/labels/:id')
  @Public('organization')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a label' })
  @ApiEmpty()
  @ApiErrors(404)
  async delete(@Caller() caller: AuthContext, @Param('org') org: string, @Param('id') id: string): Promise<void> {
    await this.labels.delete(await this.labels.organizationPlace(caller, org, 'write'), id);
  }
}
